#include "server/http_exchange.h"

#include <boost/asio/post.hpp>
#include <cstdio>
#include <exception>
#include <mutex>
#include <shared_mutex>

#include "server/http_connection.h"
#include "server/http_server_core.h"

namespace pagoda::http::detail {

ExchangeImpl::ExchangeImpl(HttpRequest request, std::weak_ptr<Connection> connection,
                           std::shared_ptr<Lifeline> lifeline)
    : request_(std::move(request)), connection_(std::move(connection)),
      lifeline_(std::move(lifeline)) {}

template <class Fn, class Gone>
void ExchangeImpl::post(Fn fn, Gone gone) {
  {
    std::shared_lock lock(lifeline_->mutex);
    if (lifeline_->alive) {
      if (auto connection = connection_.lock()) {
        auto executor = connection->executor();
        boost::asio::post(executor, [self = shared_from_this(), connection = std::move(connection),
                                     fn = std::move(fn)]() mutable { fn(*connection, *self); });
        return;
      }
    }
  }
  gone();
}

void ExchangeImpl::respond(HttpResponse response) {
  post([response = std::move(response)](Connection& c, ExchangeImpl& self) mutable {
    c.respond(self, std::move(response));
  }, [] {});
}

void ExchangeImpl::begin_stream(int status, std::string content_type, Headers headers) {
  post([status, content_type = std::move(content_type), headers = std::move(headers)](
           Connection& c, ExchangeImpl& self) mutable {
    c.begin_stream(self, status, std::move(content_type), std::move(headers));
  }, [] {});
}

void ExchangeImpl::write(std::string data) {
  const size_t size = data.size();
  add_pending(size);
  post([data = std::move(data)](Connection& c, ExchangeImpl& self) mutable {
    c.write(self, std::move(data));
  }, [this, size] { sub_pending(size); });
}

void ExchangeImpl::end_stream() {
  post([](Connection& c, ExchangeImpl& self) { c.end_stream(self); }, [] {});
}

size_t ExchangeImpl::pending_bytes() const {
  return disconnected_.load() ? 0 : pending_.load();
}

void ExchangeImpl::on_disconnect(std::function<void()> callback) {
  if (!callback) return;
  // The shared_ptr copy keeps the callback alive if `gone` runs it after the move.
  auto shared = std::make_shared<std::function<void()>>(std::move(callback));
  post([shared](Connection&, ExchangeImpl& self) { self.set_callback(std::move(*shared)); },
       [this, shared] {
         // No strand left: the connection closed, so the exchange ended one way or another.
         if (disconnected_.load()) {
           try {
             (*shared)();
           } catch (const std::exception& e) {
             std::fprintf(stderr, "http: on_disconnect callback threw: %s\n", e.what());
           }
         }
       });
}

void ExchangeImpl::set_callback(std::function<void()> callback) {
  if (phase == Phase::Flushing || phase == Phase::Done) return;
  callback_ = std::move(callback);
  if (phase == Phase::Disconnected) mark_disconnected();
}

void ExchangeImpl::mark_disconnected() {
  // Once the whole answer is queued the exchange has ended for its owner: a client that
  // leaves while the last bytes go out aborts nothing.
  if (phase == Phase::Flushing || phase == Phase::Done) return;
  phase = Phase::Disconnected;
  disconnected_.store(true);
  auto callback = std::exchange(callback_, nullptr);
  if (!callback) return;
  try {
    callback();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "http: on_disconnect callback threw: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "http: on_disconnect callback threw\n");
  }
}

}  // namespace pagoda::http::detail
