#include "blackbox/http_post.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

namespace twice::blackbox {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxHeaders = 64 << 10;

// A few bytes of what the service sent, printable, for a one-line message.
std::string shown(std::string_view bytes) {
  std::string out;
  for (const char c : bytes.substr(0, 24)) {
    const auto u = static_cast<unsigned char>(c);
    out += u >= 0x20 && u < 0x7f && c != '\'' ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }
  return out + (bytes.size() > 24 ? "..." : "");
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

// Not in the anonymous namespace: OpenRequest::State holds one.
namespace http_answer {

// An HTTP/1.1 answer, read as its bytes come: interim 1xx answers skipped,
// the body by Content-Length, chunked, or up to the connection's end.
class AnswerReader {
 public:
  enum class State { kMore, kDone, kBroken };
  explicit AnswerReader(bool head = false) : head_(head) {}

  State feed(std::string_view bytes) {
    raw_.append(bytes);
    return evaluate(false);
  }
  State at_eof() { return evaluate(true); }

  int status = 0;
  std::string body;
  std::string error;
  std::size_t received() const { return raw_.size(); }

 private:
  State broken(std::string why) {
    error = std::move(why);
    return State::kBroken;
  }

  // Reads raw_ from its start; cheap enough at these sizes (an answer is a
  // few hundred bytes, at most kMaxAnswerBody).
  State evaluate(bool eof) {
    std::string_view rest = raw_;
    for (;;) {
      const std::size_t end = rest.find("\r\n\r\n");
      if (end == std::string_view::npos) {
        if (!std::string_view("HTTP/").starts_with(rest.substr(0, 5)))
          return broken(fmt::format("not an HTTP answer: '{}'", shown(rest)));
        if (rest.size() > kMaxHeaders) return broken("the answer's headers are over 64 KiB");
        if (!eof) return State::kMore;
        return broken(rest.empty() && raw_.empty() ? "the service closed the connection without answering"
                                                   : "the service closed the connection in the middle of its answer's headers");
      }
      const std::string_view head = rest.substr(0, end);
      rest.remove_prefix(end + 4);
      const std::string_view status_line = head.substr(0, head.find("\r\n"));
      int code = 0;
      if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12 || status_line[8] != ' ' ||
          std::from_chars(status_line.data() + 9, status_line.data() + 12, code).ptr != status_line.data() + 12 ||
          code < 100 || code > 999)
        return broken(fmt::format("not an HTTP answer: '{}'", shown(status_line)));
      if (code >= 100 && code < 200) continue;  // 100 Continue and the like: the answer follows
      status = code;
      long long length = -1;
      bool chunked = false;
      std::string_view headers = head.substr(std::min(head.size(), status_line.size() + 2));
      while (!headers.empty()) {
        const std::size_t eol = headers.find("\r\n");
        const std::string_view line = headers.substr(0, eol);
        headers = eol == std::string_view::npos ? std::string_view() : headers.substr(eol + 2);
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view name = trimmed(line.substr(0, colon)), value = trimmed(line.substr(colon + 1));
        if (iequals(name, "content-length")) {
          if (std::from_chars(value.data(), value.data() + value.size(), length).ptr != value.data() + value.size() ||
              length < 0)
            return broken(fmt::format("the answer's Content-Length '{}' is not a number", shown(value)));
        } else if (iequals(name, "transfer-encoding")) {
          chunked = value.find("chunked") != std::string_view::npos;
        }
      }
      if (head_ || status == 204 || status == 304) return State::kDone;
      if (chunked) return read_chunked(rest, eof);
      if (length >= 0) {
        if (static_cast<unsigned long long>(length) > kMaxAnswerBody)
          return broken(fmt::format("the answer's body is {} bytes, over the {} twice reads", length, kMaxAnswerBody));
        if (rest.size() >= static_cast<std::size_t>(length)) {
          body = std::string(rest.substr(0, static_cast<std::size_t>(length)));
          return State::kDone;
        }
        if (!eof) return State::kMore;
        return broken(fmt::format("the service closed the connection {} bytes into a body of {}", rest.size(), length));
      }
      if (rest.size() > kMaxAnswerBody) return broken(fmt::format("the answer's body is over the {} bytes twice reads", kMaxAnswerBody));
      if (!eof) return State::kMore;
      body = std::string(rest);  // no length: the body ends with the connection
      return State::kDone;
    }
  }

  State read_chunked(std::string_view rest, bool eof) {
    std::string decoded;
    for (;;) {
      const std::size_t eol = rest.find("\r\n");
      if (eol == std::string_view::npos) break;
      const std::string_view size_line = rest.substr(0, eol);
      const std::string_view size_text = trimmed(size_line.substr(0, size_line.find(';')));
      std::size_t size = 0;
      if (size_text.empty() ||
          std::from_chars(size_text.data(), size_text.data() + size_text.size(), size, 16).ptr !=
              size_text.data() + size_text.size())
        return broken(fmt::format("a chunk of the answer's body has no size: '{}'", shown(size_text)));
      if (size == 0) {
        body = std::move(decoded);
        return State::kDone;  // trailers, if any, are not read
      }
      if (decoded.size() + size > kMaxAnswerBody)
        return broken(fmt::format("the answer's body is over the {} bytes twice reads", kMaxAnswerBody));
      if (rest.size() < eol + 2 + size + 2) break;
      decoded.append(rest.substr(eol + 2, size));
      rest.remove_prefix(eol + 2 + size + 2);
    }
    if (!eof) return State::kMore;
    return broken("the service closed the connection in the middle of a chunked body");
  }

  std::string raw_;
  bool head_;
};

}  // namespace http_answer

namespace {

using http_answer::AnswerReader;

Micros left(Clock::time_point deadline) {
  return std::max<Micros>(0, std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count());
}

// Waits for `events` on fd until the deadline, or until `stop` is stopped:
// false when it passed, or stopped.
bool wait_for(int fd, short events, Clock::time_point deadline, const process::StopNow* stop) {
  for (;;) {
    if (stop && stop->stopped()) return false;
    Micros us = left(deadline);
    if (us == 0) return false;
    if (stop) us = std::min(us, kStopCheck);
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<Micros>((us + 999) / 1000, 1 << 30)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // the next call says what is wrong
  }
}

std::string socket_error(int error) {
  if (error == ECONNRESET) return "the service reset the connection";
  if (error == EPIPE) return "the service closed the connection while twice was sending";
  return std::strerror(error);
}

// The endpoint's address: "localhost" is 127.0.0.1 (a hosts file cannot send it elsewhere).
bool address_of(const HttpEndpoint& to, sockaddr_storage& out, socklen_t& size) {
  std::memset(&out, 0, sizeof out);
  const std::string host = to.host == "localhost" ? "127.0.0.1" : to.host;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(to.port));
    size = sizeof *v4;
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(to.port));
    size = sizeof *v6;
    return true;
  }
  return false;
}

}  // namespace

struct OpenRequest::State {
  int fd = -1;
  AnswerReader reader;
  ~State() {
    if (fd >= 0) ::close(fd);
  }
};

OpenRequest::OpenRequest() = default;
OpenRequest::~OpenRequest() = default;
OpenRequest::OpenRequest(OpenRequest&&) noexcept = default;
OpenRequest& OpenRequest::operator=(OpenRequest&&) noexcept = default;
bool OpenRequest::holds_connection() const { return state_ && state_->fd >= 0; }

namespace {

HttpOutcome exchange(const HttpEndpoint& to, std::string_view method, const WireRequest* request, Micros timeout,
                     OpenRequest* gave_up, std::unique_ptr<OpenRequest::State>& handed,
                     const process::StopNow* stop = nullptr) {
  HttpOutcome out;
  const Clock::time_point deadline = Clock::now() + std::chrono::microseconds(timeout);
  const auto timed_out = [&](std::string what) {
    out.kind = HttpOutcome::Kind::kTimedOut;
    out.error = std::move(what);
    return out;
  };
  const auto failed = [&](std::string why) {
    out.kind = HttpOutcome::Kind::kBroken;
    out.error = std::move(why);
    return out;
  };
  sockaddr_storage address{};
  socklen_t size = 0;
  if (!address_of(to, address, size)) return failed(fmt::format("'{}' is not an IP address", to.host));
  auto state = std::make_unique<OpenRequest::State>();
  state->reader = AnswerReader(method == "HEAD");
  state->fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (state->fd < 0) return failed(fmt::format("socket(): {}", std::strerror(errno)));
  const int fd = state->fd;

  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), size) != 0 && errno != EINPROGRESS) {
    if (errno == ECONNREFUSED) {
      out.kind = HttpOutcome::Kind::kRefused;
      out.error = "connection refused";
      return out;
    }
    return failed(std::strerror(errno));
  }
  if (!wait_for(fd, POLLOUT, deadline, stop)) return timed_out("no connection within the timeout");
  int error = 0;
  socklen_t error_size = sizeof error;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &error_size);
  if (error == ECONNREFUSED) {
    out.kind = HttpOutcome::Kind::kRefused;
    out.error = "connection refused";
    return out;
  }
  if (error != 0) return failed(std::strerror(error));

  std::string message = fmt::format("{} {} HTTP/1.1\r\nHost: {}:{}\r\nConnection: close\r\nUser-Agent: twice-blackbox\r\n",
                                    method, to.path, to.host.find(':') != std::string::npos ? "[" + to.host + "]" : to.host,
                                    to.port);
  if (request) {
    message += fmt::format("Content-Type: {}\r\nContent-Length: {}\r\n", request->content_type, request->body.size());
    for (const auto& [k, v] : request->headers) message += k + ": " + v + "\r\n";
    message += "\r\n" + request->body;
  } else {
    message += "Content-Length: 0\r\n\r\n";
  }
  std::string_view unsent = message;
  bool write_failed = false;
  while (!unsent.empty()) {
    const ssize_t n = ::send(fd, unsent.data(), unsent.size(), MSG_NOSIGNAL);
    if (n > 0) {
      unsent.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLOUT, deadline, stop)) {
        if (gave_up) handed = std::move(state);
        return timed_out("the request was not taken within the timeout");
      }
      continue;
    }
    // The service may have answered early (a 413) before closing: read on.
    out.error = socket_error(errno);
    write_failed = true;
    break;
  }
  out.sent = unsent.empty();

  char buffer[16 << 10];
  for (;;) {
    AnswerReader::State s = AnswerReader::State::kMore;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      s = state->reader.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    } else if (n == 0) {
      s = state->reader.at_eof();
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_for(fd, POLLIN, deadline, stop)) {
        if (gave_up) handed = std::move(state);
        return timed_out("no whole answer within the timeout");
      }
      continue;
    } else {
      if (write_failed && state->reader.received() == 0) return failed(out.error);
      const std::string why = socket_error(errno);
      return failed(state->reader.received() == 0 ? why + " before answering" : why + " in the middle of its answer");
    }
    if (s == AnswerReader::State::kDone) {
      out.kind = HttpOutcome::Kind::kAnswered;
      out.http_status = state->reader.status;
      out.body = std::move(state->reader.body);
      out.error.clear();
      return out;
    }
    if (s == AnswerReader::State::kBroken) return failed(state->reader.error);
  }
}

}  // namespace

HttpOutcome post(const HttpEndpoint& to, const WireRequest& request, Micros timeout, OpenRequest* gave_up,
                 const process::StopNow* stop) {
  std::unique_ptr<OpenRequest::State> handed;
  HttpOutcome out = exchange(to, "POST", &request, timeout, gave_up, handed, stop);
  if (handed && gave_up && !(stop && stop->stopped())) gave_up->state_ = std::move(handed);
  return out;
}

HttpOutcome probe(const HttpEndpoint& to, Micros timeout) {
  std::unique_ptr<OpenRequest::State> handed;
  return exchange(to, "OPTIONS", nullptr, timeout, nullptr, handed);
}

int wait_until_ended(std::vector<OpenRequest>& open, Micros bound) {
  const Clock::time_point deadline = Clock::now() + std::chrono::microseconds(bound);
  std::erase_if(open, [](const OpenRequest& r) { return !r.state_ || r.state_->fd < 0; });
  char buffer[16 << 10];
  while (!open.empty()) {
    const Micros us = left(deadline);
    if (us == 0) break;
    std::vector<pollfd> fds;
    for (const auto& r : open) fds.push_back({r.state_->fd, POLLIN, 0});
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<Micros>((us + 999) / 1000, 1 << 30)));
    if (n <= 0) continue;
    std::vector<bool> ended(open.size(), false);
    for (std::size_t i = 0; i < open.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t got = ::recv(fds[i].fd, buffer, sizeof buffer, 0);
      if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      AnswerReader& reader = open[i].state_->reader;
      const AnswerReader::State s = got > 0 ? reader.feed(std::string_view(buffer, static_cast<std::size_t>(got)))
                                            : AnswerReader::State::kDone;  // closed or reset: the service let go
      ended[i] = s != AnswerReader::State::kMore;
    }
    std::size_t k = 0;
    std::erase_if(open, [&](const OpenRequest&) { return ended[k++]; });
  }
  return static_cast<int>(open.size());
}

}  // namespace twice::blackbox
