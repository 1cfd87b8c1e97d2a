// The subcommands of the pagoda binary. Each lives in its own file in src/cli and takes
// the arguments after its name; it returns the process exit status.
#pragma once

namespace pagoda::cli {

int cmd_generate(int argc, char** argv);  // generate.cpp
int cmd_bench(int argc, char** argv);     // bench.cpp
int cmd_serve(int argc, char** argv);     // serve.cpp: the OpenAI-compatible server
int cmd_inspect(int argc, char** argv);   // inspect.cpp: a model file's metadata and tensors as JSON
int cmd_dequant(int argc, char** argv);   // dequant.cpp: raw quantized blocks -> f32 (for tests)
int cmd_template(int argc, char** argv);  // template.cpp: render a chat template for a conversation
int cmd_tokenize(int argc, char** argv);    // tokenize.cpp: text -> JSON arrays of ids
int cmd_detokenize(int argc, char** argv);  // tokenize.cpp: JSON arrays of ids -> text
int cmd_logits(int argc, char** argv);      // logits.cpp: every position's logits for a prompt of ids

}  // namespace pagoda::cli
