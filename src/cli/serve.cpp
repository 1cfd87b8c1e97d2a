// pagoda serve [MODEL] --host H --port P [--api-key K] [--served-model-name NAME]
//   [--max-num-queued-requests N] [--max-num-queued-tokens N] [--http-threads N] [engine flags]
// The OpenAI-compatible server (server/api_server.h). SIGINT/SIGTERM stop it gracefully:
// in-flight requests get a few seconds to finish, then the process exits 0.
#include <csignal>
#include <cstdio>
#include <pthread.h>
#include <string>
#include <thread>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/engine_args.h"
#include "engine/llm_engine.h"
#include "server/api_server.h"
#include "server/http_server.h"

namespace pagoda::cli {

int cmd_serve(int argc, char** argv) {
  const Args args(argc, argv,
                  with_engine_value_options({"host", "port", "api-key", "served-model-name", "max-num-queued-requests",
                                             "max-num-queued-tokens", "http-threads"}),
                  with_engine_flag_options({}));
  if (args.positional().size() > 1) fail("expected at most one MODEL argument");
  const std::string model = args.positional().empty() ? default_model_path() : args.positional()[0];

  // Every thread started from here on inherits the mask, so only the watcher below ever
  // receives the signals (and nothing runs inside a signal handler).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  http::HttpServerOptions http_options;
  http_options.host = args.get("host", "127.0.0.1");
  http_options.port = static_cast<int>(args.get_int("port", 8000, 0, 65535));
  http_options.num_threads = static_cast<int>(args.get_int("http-threads", 2, 1, 256));

  server::ApiServerOptions api_options;
  api_options.model_path = model;
  api_options.served_model_names.push_back(args.get("served-model-name", model));
  if (args.has("api-key")) api_options.api_key = args.get("api-key", "");
  api_options.max_num_queued_requests = args.get_int("max-num-queued-requests", 0, 0, 1LL << 40);
  api_options.max_num_queued_tokens = args.get_int("max-num-queued-tokens", 0, 0, 1LL << 50);

  LLMEngine engine(model, engine_options_from(args));
  server::ApiServer api(engine, std::move(api_options));
  http::HttpServer server(http_options, [&api](std::shared_ptr<http::HttpExchange> exchange) { api.handle(exchange); });
  std::printf("pagoda serve: %s on http://%s:%d\n", model.c_str(), http_options.host.c_str(), server.port());
  std::fflush(stdout);

  std::thread watcher([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    server.stop();
  });
  server.run();
  // run() may also end without a signal: wake the watcher so it can be joined.
  pthread_kill(watcher.native_handle(), SIGTERM);
  watcher.join();
  std::fputs("pagoda serve: stopped\n", stderr);
  return 0;
}

}  // namespace pagoda::cli
