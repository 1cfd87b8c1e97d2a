// The HTTP server over real sockets: whole answers, keep-alive, pipelining, limits and
// malformed input, handler failures, connection limits and the idle timeout.
#include "server/http_server.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/error.h"
#include "server/http_test_client.h"
#include "server/http_test_server.h"

namespace pagoda::http {
namespace {

using testing::ClientResponse;
using testing::ExchangeQueue;
using testing::fetch;
using testing::RunningServer;
using testing::TestClient;
using testing::make_request;

// Answers with a JSON description of what it received.
void echo(std::shared_ptr<HttpExchange> exchange) {
  const HttpRequest& request = exchange->request();
  nlohmann::json out = {{"method", request.method}, {"target", request.target},
                        {"path", request.path},     {"body", request.body}};
  const std::string* custom = request.header("x-custom");
  out["x_custom"] = custom ? *custom : "<none>";
  out["missing_is_null"] = request.header("x-missing") == nullptr;
  HttpResponse response;
  response.body = out.dump();
  response.headers.emplace_back("X-Reply", "yes");
  exchange->respond(std::move(response));
}

nlohmann::json expect_error(const ClientResponse& response, int status) {
  EXPECT_EQ(response.status, status);
  EXPECT_EQ(response.header("content-type"), "application/json");
  auto body = nlohmann::json::parse(response.body);
  EXPECT_EQ(body["error"]["code"], status);
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  EXPECT_TRUE(body["error"]["param"].is_null());
  EXPECT_TRUE(body["error"]["message"].is_string());
  return body;
}

TEST(HttpServer, PostRoundTripWithBodyAndHeaders) {
  RunningServer server({}, echo);
  const ClientResponse response = fetch(server.port(), make_request("POST", "/v1/echo?x=1&y=2",
                                                                     "{\"hello\": \"world\"}",
                                                                     "X-Custom: Some Value\r\n"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.header("content-type"), "application/json");
  EXPECT_EQ(response.header("x-reply"), "yes");
  EXPECT_EQ(response.header("content-length"), std::to_string(response.body.size()));
  const auto body = nlohmann::json::parse(response.body);
  EXPECT_EQ(body["method"], "POST");
  EXPECT_EQ(body["target"], "/v1/echo?x=1&y=2");
  EXPECT_EQ(body["path"], "/v1/echo");
  EXPECT_EQ(body["body"], "{\"hello\": \"world\"}");
  EXPECT_EQ(body["x_custom"], "Some Value");  // sent as X-Custom, looked up lower-case
  EXPECT_EQ(body["missing_is_null"], true);
}

TEST(HttpServer, TwoRequestsOnOneKeepAliveConnection) {
  RunningServer server({}, echo);
  TestClient client(server.port());
  client.send(make_request("GET", "/first"));
  const ClientResponse first = client.read_response();
  EXPECT_EQ(first.header("connection"), "");
  client.send(make_request("POST", "/second", "abc"));
  const ClientResponse second = client.read_response();
  EXPECT_EQ(nlohmann::json::parse(first.body)["path"], "/first");
  EXPECT_EQ(nlohmann::json::parse(second.body)["body"], "abc");
}

TEST(HttpServer, PipelinedRequestsAreAnsweredInOrder) {
  RunningServer server({}, echo);
  TestClient client(server.port());
  client.send(make_request("GET", "/a") + make_request("POST", "/b", "xyz") +
              make_request("GET", "/c"));
  for (const char* path : {"/a", "/b", "/c"})
    EXPECT_EQ(nlohmann::json::parse(client.read_response().body)["path"], path);
}

TEST(HttpServer, ConnectionCloseIsHonoured) {
  RunningServer server({}, echo);
  TestClient client(server.port());
  client.send(make_request("GET", "/bye", "", "Connection: close\r\n"));
  const ClientResponse response = client.read_response();
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.header("connection"), "close");
  EXPECT_TRUE(client.wait_closed());
}

TEST(HttpServer, OversizedBodyGets413AndHandlerNeverRuns) {
  testing::Counter calls;
  HttpServerOptions options;
  options.max_body_bytes = 16;
  RunningServer server(options, [&](std::shared_ptr<HttpExchange> exchange) {
    calls.add();
    echo(std::move(exchange));
  });
  {
    TestClient client(server.port());
    client.send(make_request("POST", "/big", std::string(100, 'x')));
    expect_error(client.read_response(), 413);
    EXPECT_TRUE(client.wait_closed());
  }
  {  // A chunked body has no length up front: the limit trips while it arrives.
    TestClient client(server.port());
    client.send("POST /big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                "a\r\n0123456789\r\na\r\n0123456789\r\n0\r\n\r\n");
    expect_error(client.read_response(), 413);
  }
  // At the limit is fine.
  EXPECT_EQ(fetch(server.port(), make_request("POST", "/ok", std::string(16, 'y'))).status, 200);
  EXPECT_EQ(calls.count(), 1);
}

TEST(HttpServer, OversizedHeaderGets431) {
  HttpServerOptions options;
  options.max_header_bytes = 1024;
  RunningServer server(options, echo);
  TestClient client(server.port());
  client.send(make_request("GET", "/", "", "X-Big: " + std::string(4000, 'h') + "\r\n"));
  expect_error(client.read_response(), 431);
  EXPECT_TRUE(client.wait_closed());
}

TEST(HttpServer, MalformedRequestsGet400AndClose) {
  RunningServer server({}, echo);
  for (const char* bad : {"GARBAGE\r\n\r\n", "GET / HTTP/1.1\r\nNo colon here\r\n\r\n",
                          "GET / HTTP/9.9\r\n\r\n",
                          "POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n"}) {
    TestClient client(server.port());
    client.send(bad);
    expect_error(client.read_response(), 400);
    EXPECT_TRUE(client.wait_closed()) << bad;
  }
}

TEST(HttpServer, ThrowingHandlerGets500AndConnectionSurvives) {
  RunningServer server({}, [](std::shared_ptr<HttpExchange> exchange) {
    if (exchange->request().path == "/throw") throw std::runtime_error("boom");
    echo(std::move(exchange));
  });
  TestClient client(server.port());
  client.send(make_request("GET", "/throw"));
  const ClientResponse failed = client.read_response();
  EXPECT_EQ(failed.status, 500);
  const auto body = nlohmann::json::parse(failed.body);
  EXPECT_EQ(body["error"]["code"], 500);
  EXPECT_NE(body["error"]["message"].get<std::string>().find("boom"), std::string::npos);
  client.send(make_request("GET", "/fine"));
  EXPECT_EQ(client.read_response().status, 200);
}

TEST(HttpServer, ExpectContinueGetsInterimAnswer) {
  RunningServer server({}, echo);
  TestClient client(server.port());
  client.send("POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(client.read_head().status, 100);  // before the body was sent
  client.send("hello");
  const ClientResponse response = client.read_response();
  EXPECT_EQ(nlohmann::json::parse(response.body)["body"], "hello");
}

TEST(HttpServer, AnswersLaterFromAnotherThread) {
  ExchangeQueue exchanges;
  RunningServer server({}, exchanges.handler());
  TestClient client(server.port());
  client.send(make_request("GET", "/later"));
  auto exchange = exchanges.pop();
  ASSERT_TRUE(exchange);
  std::thread worker([exchange] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    HttpResponse response;
    response.status = 201;
    response.content_type = "text/plain";
    response.body = "done " + exchange->request().path;
    exchange->respond(std::move(response));
    exchange->respond(HttpResponse{});  // a second answer is ignored
  });
  const ClientResponse response = client.read_response();
  worker.join();
  EXPECT_EQ(response.status, 201);
  EXPECT_EQ(response.header("content-type"), "text/plain");
  EXPECT_EQ(response.body, "done /later");
  EXPECT_FALSE(exchange->disconnected());
}

TEST(HttpServer, ConnectionsBeyondTheLimitAreClosed) {
  HttpServerOptions options;
  options.max_connections = 2;
  RunningServer server(options, echo);
  TestClient a(server.port()), b(server.port());
  for (TestClient* client : {&a, &b}) {  // both are accepted and served
    client->send(make_request("GET", "/"));
    EXPECT_EQ(client->read_response().status, 200);
  }
  TestClient c(server.port());
  EXPECT_TRUE(c.wait_closed());
  a.close();  // a slot frees up
  EXPECT_TRUE(testing::eventually([&] {
    try {
      return fetch(server.port(), make_request("GET", "/")).status == 200;
    } catch (const std::exception&) {
      return false;
    }
  }));
}

TEST(HttpServer, IdleKeepAliveConnectionsTimeOutButPendingAnswersDoNot) {
  HttpServerOptions options;
  options.idle_timeout_s = 1;
  ExchangeQueue exchanges;
  RunningServer server(options, exchanges.handler());
  TestClient idle(server.port());
  TestClient waiting(server.port());
  waiting.send(make_request("GET", "/slow"));
  auto exchange = exchanges.pop();
  ASSERT_TRUE(exchange);
  EXPECT_TRUE(idle.wait_closed());  // within the client's 10 s receive timeout
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the idle timeout
  exchange->respond(HttpResponse{200, "text/plain", "still here", {}});
  EXPECT_EQ(waiting.read_response().body, "still here");
  EXPECT_FALSE(exchange->disconnected());
}

TEST(HttpServer, BindFailureThrows) {
  HttpServer first({.host = "127.0.0.1", .port = 0}, echo);
  HttpServerOptions taken;
  taken.port = first.port();
  EXPECT_THROW(HttpServer(taken, echo), Error);
}

}  // namespace
}  // namespace pagoda::http
