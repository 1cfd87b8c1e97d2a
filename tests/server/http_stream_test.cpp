// The HTTP server's streams and lifetimes over real sockets: chunked streaming, client
// disconnects (mid-stream, before any answer, by reset), stop() with answers in flight,
// thousands of idle connections on two threads, write-queue accounting.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/http_server.h"
#include "server/http_test_client.h"
#include "server/http_test_server.h"

namespace pagoda::http {
namespace {

using testing::ClientResponse;
using testing::Counter;
using testing::eventually;
using testing::ExchangeQueue;
using testing::fetch;
using testing::RunningServer;
using testing::TestClient;
using testing::make_request;

// "/<i>"; built by append because `"/" + std::to_string(i)` trips GCC 12's -Wrestrict.
std::string path_of(int i) {
  std::string path = "/";
  path += std::to_string(i);
  return path;
}

TEST(HttpStream, ChunksArriveAsWrittenAndDecodeToTheWrites) {
  ExchangeQueue exchanges;
  RunningServer server({}, exchanges.handler());
  TestClient client(server.port());
  client.send(make_request("POST", "/v1/completions", "{}"));
  auto exchange = exchanges.pop();
  ASSERT_TRUE(exchange);
  exchange->begin_stream(200, "text/event-stream", {{"X-Request-Id", "r1"}});
  const ClientResponse head = client.read_head();  // the head goes out before any data
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.header("content-type"), "text/event-stream");
  EXPECT_EQ(head.header("cache-control"), "no-cache");
  EXPECT_EQ(head.header("transfer-encoding"), "chunked");
  EXPECT_EQ(head.header("x-request-id"), "r1");
  EXPECT_EQ(head.header("content-length"), "");
  // Each write reaches the client before the next is made: it really streams.
  std::vector<std::string> pieces = {"data: {\"a\":1}\n\n", std::string(70000, 'z'), "x",
                                     "data: [DONE]\n\n"};
  std::string received;
  for (const std::string& piece : pieces) {
    exchange->write(piece);
    exchange->write("");  // empty writes must not end the stream
    while (received.size() < piece.size()) received += client.read_chunk();
    EXPECT_EQ(received, piece);
    received.clear();
  }
  exchange->end_stream();
  EXPECT_EQ(client.read_chunk(), "");  // the terminating chunk
  // The connection is kept alive for the next request.
  client.send(make_request("GET", "/next"));
  auto next = exchanges.pop();
  ASSERT_TRUE(next);
  next->respond(HttpResponse{200, "text/plain", "ok", {}});
  EXPECT_EQ(client.read_response().body, "ok");
  EXPECT_FALSE(exchange->disconnected());
}

TEST(HttpStream, WholeStreamWrittenAtOnceDecodesToTheConcatenation) {
  ExchangeQueue exchanges;
  RunningServer server({}, exchanges.handler());
  TestClient client(server.port());
  client.send(make_request("GET", "/stream"));
  auto exchange = exchanges.pop();
  ASSERT_TRUE(exchange);
  std::string expected;
  exchange->begin_stream(200, "application/x-ndjson");
  for (int i = 0; i < 500; ++i) {
    std::string line = "{\"i\":" + std::to_string(i) + "}\n";
    expected += line;
    exchange->write(std::move(line));
  }
  exchange->end_stream();
  const ClientResponse response = client.read_response();
  EXPECT_EQ(response.body, expected);
  EXPECT_EQ(response.header("cache-control"), "");  // only event streams get no-cache
}

TEST(HttpStream, ClientClosingMidStreamFiresTheCallbackOnce) {
  ExchangeQueue exchanges;
  RunningServer server({}, exchanges.handler());
  Counter disconnects;
  for (bool reset : {false, true}) {
    TestClient client(server.port());
    client.send(make_request("GET", "/stream"));
    auto exchange = exchanges.pop();
    ASSERT_TRUE(exchange);
    exchange->on_disconnect([&] { disconnects.add(); });
    exchange->begin_stream(200, "text/event-stream");
    exchange->write("data: 1\n\n");
    client.read_head();
    EXPECT_EQ(client.read_chunk(), "data: 1\n\n");
    const int before = disconnects.count();
    if (reset) {
      client.reset();
    } else {
      client.close();
    }
    EXPECT_TRUE(disconnects.wait_for(before + 1));
    EXPECT_TRUE(exchange->disconnected());
    exchange->write("data: 2\n\n");  // ignored from now on
    exchange->end_stream();
    EXPECT_EQ(exchange->pending_bytes(), 0u);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(disconnects.count(), 2);  // once per exchange, never again
}

TEST(HttpStream, ClientClosingBeforeAnyAnswerFiresTheCallback) {
  ExchangeQueue exchanges;
  RunningServer server({}, exchanges.handler());
  Counter disconnects;
  {  // Callback registered first, then the client leaves.
    TestClient client(server.port());
    client.send(make_request("POST", "/v1/chat/completions", "{}"));
    auto exchange = exchanges.pop();
    ASSERT_TRUE(exchange);
    exchange->on_disconnect([&] { disconnects.add(); });
    client.close();
    EXPECT_TRUE(disconnects.wait_for(1));
    exchange->respond(HttpResponse{});  // ignored
  }
  {  // The client left before the callback was registered: it runs at once.
    TestClient client(server.port());
    client.send(make_request("POST", "/v1/chat/completions", "{}"));
    auto exchange = exchanges.pop();
    ASSERT_TRUE(exchange);
    client.close();
    EXPECT_TRUE(eventually([&] { return exchange->disconnected(); }));
    exchange->on_disconnect([&] { disconnects.add(); });
    EXPECT_TRUE(disconnects.wait_for(2));
  }
  {  // A finished exchange never fires, even when the client leaves afterwards.
    TestClient client(server.port());
    client.send(make_request("GET", "/"));
    auto exchange = exchanges.pop();
    ASSERT_TRUE(exchange);
    exchange->on_disconnect([&] { disconnects.add(); });
    exchange->respond(HttpResponse{200, "text/plain", "bye", {}});
    EXPECT_EQ(client.read_response().body, "bye");
    client.close();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(exchange->disconnected());
  }
  EXPECT_EQ(disconnects.count(), 2);
}

TEST(HttpStream, PendingBytesGrowWhileTheClientStallsAndDrainToZero) {
  ExchangeQueue exchanges;
  RunningServer server({}, exchanges.handler());
  TestClient client(server.port(), 30);
  client.send(make_request("GET", "/big"));
  auto exchange = exchanges.pop();
  ASSERT_TRUE(exchange);
  exchange->begin_stream(200, "application/octet-stream");
  const std::string piece(1 << 20, 'p');
  constexpr int kPieces = 64;  // far more than loopback socket buffers hold
  for (int i = 0; i < kPieces; ++i) exchange->write(piece);
  EXPECT_GT(exchange->pending_bytes(), 0u);
  EXPECT_LE(exchange->pending_bytes(), size_t{kPieces} << 20);
  exchange->end_stream();
  const ClientResponse response = client.read_response();
  EXPECT_EQ(response.body.size(), size_t{kPieces} << 20);
  EXPECT_TRUE(eventually([&] { return exchange->pending_bytes() == 0; }));
}

TEST(HttpStream, StopClosesInFlightStreamsAndEndsRun) {
  ExchangeQueue exchanges;
  auto server = std::make_unique<RunningServer>(HttpServerOptions{}, exchanges.handler());
  TestClient streaming(server->port());
  TestClient idle(server->port());
  streaming.send(make_request("GET", "/stream"));
  auto exchange = exchanges.pop();
  ASSERT_TRUE(exchange);
  Counter disconnects;
  exchange->on_disconnect([&] { disconnects.add(); });
  exchange->begin_stream(200, "text/event-stream");
  exchange->write("data: 1\n\n");
  streaming.read_head();
  EXPECT_EQ(streaming.read_chunk(), "data: 1\n\n");
  server->stop(0.2);  // returns once run() returned
  EXPECT_EQ(disconnects.count(), 1);
  EXPECT_TRUE(exchange->disconnected());
  EXPECT_TRUE(streaming.wait_closed());
  EXPECT_TRUE(idle.wait_closed());
  server.reset();
  exchange->write("after the server is gone");  // must be a harmless no-op
  exchange->end_stream();
}

TEST(HttpStream, StopLetsAnswersFinishWithinTheGracePeriod) {
  ExchangeQueue exchanges;
  RunningServer server({}, exchanges.handler());
  TestClient client(server.port());
  client.send(make_request("GET", "/slow"));
  auto exchange = exchanges.pop();
  ASSERT_TRUE(exchange);
  Counter disconnects;
  exchange->on_disconnect([&] { disconnects.add(); });
  std::thread stopper([&] { server.stop(30.0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // No longer accepting.
  EXPECT_THROW((void)fetch(server.port(), make_request("GET", "/"), 1), std::exception);
  exchange->respond(HttpResponse{200, "text/plain", "made it", {}});
  const ClientResponse response = client.read_response();
  stopper.join();  // run() returned without waiting out the 30 s
  EXPECT_EQ(response.body, "made it");
  EXPECT_EQ(response.header("connection"), "close");
  EXPECT_TRUE(client.wait_closed());
  EXPECT_EQ(disconnects.count(), 0);
}

TEST(HttpStream, TwoThousandIdleConnectionsOnTwoThreadsAreAllAnswered) {
  constexpr int kConnections = 2000;
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  const rlim_t needed = 2 * kConnections + 256;  // both ends live in this process
  if (limit.rlim_cur < needed) {
    if (limit.rlim_max < needed)
      GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << limit.rlim_max << " < " << needed;
    limit.rlim_cur = needed;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  }
  HttpServerOptions options;
  options.num_threads = 2;
  RunningServer server(options, [](std::shared_ptr<HttpExchange> exchange) {
    exchange->respond(HttpResponse{200, "text/plain", exchange->request().path, {}});
  });
  std::vector<std::unique_ptr<TestClient>> clients;
  clients.reserve(kConnections);
  for (int i = 0; i < kConnections; ++i)
    clients.push_back(std::make_unique<TestClient>(server.port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // all held idle
  for (int i = kConnections - 1; i >= 0; --i)
    clients[static_cast<size_t>(i)]->send(make_request("GET", path_of(i)));
  int answered = 0;
  for (int i = 0; i < kConnections; ++i) {
    const ClientResponse response = clients[static_cast<size_t>(i)]->read_response();
    answered += response.status == 200 && response.body == path_of(i);
  }
  EXPECT_EQ(answered, kConnections);
}

}  // namespace
}  // namespace pagoda::http
