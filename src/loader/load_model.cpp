#include "loader/load_model.h"

#include <sys/stat.h>

#include "loader/gguf.h"

namespace pagoda {

LoadedModel load_model(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail("model not found: ", path);
  if (S_ISDIR(st.st_mode)) return load_hf_model(path);
  return load_gguf_model(std::shared_ptr<GgufFile>(GgufFile::open(path)));
}

}  // namespace pagoda
