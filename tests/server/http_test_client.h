// A small blocking HTTP/1.1 client on plain POSIX sockets for the server tests: it sends
// raw bytes and decodes answers (Content-Length or chunked) on its own, so that the
// tests check the server's framing against an independent reading of the protocol.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pagoda::http::testing {

struct ClientResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;                            // decoded
  std::vector<std::string> chunks;             // for chunked answers, as framed
  [[nodiscard]] std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

inline std::string make_request(std::string_view method, std::string_view target,
                                std::string_view body = {}, std::string_view extra_headers = {}) {
  std::string out;
  out.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  out.append(extra_headers);
  if (!body.empty() || method == "POST")
    out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  out.append("\r\n").append(body);
  return out;
}

class TestClient {
 public:
  explicit TestClient(int port, int timeout_s = 10) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    timeval tv{timeout_s, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      const int err = errno;
      ::close(fd_);
      throw std::runtime_error(std::string("connect: ") + std::strerror(err));
    }
  }
  ~TestClient() { close(); }
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Closes with a reset instead of a FIN (SO_LINGER 0), like a killed client.
  void reset() {
    linger lg{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close();
  }

  void send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error(std::string("send: ") + std::strerror(errno));
      bytes.remove_prefix(static_cast<size_t>(n));
    }
  }

  // Status line and headers only; the body stays for read_body / read_chunk.
  ClientResponse read_head() {
    ClientResponse response;
    const std::string head = read_until("\r\n\r\n");
    size_t line_end = head.find("\r\n");
    const std::string status_line = head.substr(0, line_end);
    if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12)
      throw std::runtime_error("bad status line: " + status_line);
    response.status = std::stoi(status_line.substr(9, 3));
    size_t pos = line_end + 2;
    while (pos < head.size()) {
      const size_t end = head.find("\r\n", pos);
      const std::string line = head.substr(pos, end - pos);
      pos = end + 2;
      if (line.empty()) break;
      const size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      size_t value_start = colon + 1;
      while (value_start < line.size() && line[value_start] == ' ') ++value_start;
      response.headers[name] = line.substr(value_start);
    }
    return response;
  }

  // One chunk of a chunked body; empty at the last chunk (after which the trailer is read).
  std::string read_chunk() {
    const std::string size_line = read_until("\r\n");
    const size_t size = std::stoul(size_line, nullptr, 16);
    if (size == 0) {
      read_until("\r\n");  // no trailers: the empty line
      return {};
    }
    std::string data = read_exact(size);
    if (read_exact(2) != "\r\n") throw std::runtime_error("chunk not followed by CRLF");
    return data;
  }

  ClientResponse read_response() {
    ClientResponse response = read_head();
    if (response.status == 100) return read_response();
    if (response.header("transfer-encoding") == "chunked") {
      for (std::string data = read_chunk(); !data.empty(); data = read_chunk()) {
        response.body += data;
        response.chunks.push_back(std::move(data));
      }
    } else if (!response.header("content-length").empty()) {
      response.body = read_exact(std::stoul(response.header("content-length")));
    } else {
      while (fill()) {
      }
      response.body = std::exchange(buffered_, {});
    }
    return response;
  }

  // True once the server closed the connection (EOF or reset) within the timeout; false
  // if bytes arrived instead or the timeout passed.
  bool wait_closed() {
    if (!buffered_.empty()) return false;
    char c;
    const ssize_t n = ::recv(fd_, &c, 1, 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
    buffered_.push_back(c);
    return false;
  }

  [[nodiscard]] int fd() const { return fd_; }

 private:
  bool fill() {
    char data[16384];
    const ssize_t n = ::recv(fd_, data, sizeof data, 0);
    if (n <= 0) return false;
    buffered_.append(data, static_cast<size_t>(n));
    return true;
  }
  std::string read_until(std::string_view marker) {
    size_t found;
    while ((found = buffered_.find(marker)) == std::string::npos)
      if (!fill()) throw std::runtime_error("connection ended before '" + std::string(marker) + "'");
    std::string out = buffered_.substr(0, found + marker.size());
    buffered_.erase(0, found + marker.size());
    return out;
  }
  std::string read_exact(size_t n) {
    while (buffered_.size() < n)
      if (!fill()) throw std::runtime_error("connection ended inside a body");
    std::string out = buffered_.substr(0, n);
    buffered_.erase(0, n);
    return out;
  }

  int fd_ = -1;
  std::string buffered_;
};

// Connects, sends `request` and reads the one answer; the connection then closes. Throws
// std::runtime_error when the server refuses, closes early or the timeout passes.
inline ClientResponse fetch(int port, std::string_view request, int timeout_s = 10) {
  TestClient client(port, timeout_s);
  client.send(request);
  return client.read_response();
}

}  // namespace pagoda::http::testing
