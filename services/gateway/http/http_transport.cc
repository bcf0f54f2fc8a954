#include "services/gateway/http/http_transport.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <array>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "services/gateway/http/http_transport_parts.h"

namespace gpuadvisor::gateway::http {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using TlsStream = ssl::stream<tcp::socket>;
using transport_internal::CertificateIdentity;
using transport_internal::Endpoint;
using transport_internal::HeadFromBytes;
using transport_internal::MakeTlsContext;
using transport_internal::Serialize;

// A connection over the cap waits this long for its request's head (to
// answer 503 with its request id and CORS headers), and at most this many
// wait at once; past them a 503 is written at once.
constexpr std::chrono::milliseconds kRefusalWait(50);
constexpr int kMaxRefusing = 256;

std::chrono::nanoseconds Chrono(absl::Duration d) {
  return std::chrono::nanoseconds(absl::ToInt64Nanoseconds(d));
}

tcp::socket& Socket(tcp::socket& s) { return s; }
tcp::socket& Socket(TlsStream& s) { return s.next_layer(); }

}  // namespace

std::string HttpRequest::Header(absl::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

struct HttpTransport::Impl {
  Options options;
  Handler handler;
  AsyncHandler async_handler;
  // Outlive every session (a session's destructor counts itself out).
  std::atomic<int> open{0};
  std::atomic<int> in_flight{0};
  // Replies the asynchronous handler owes (each called once, perhaps from a
  // backend's thread after the grace): Stop() waits for them, since every
  // one posts to `ioc`.
  absl::Mutex replies_mu;
  int replies_owed ABSL_GUARDED_BY(replies_mu) = 0;
  void OweReply(int delta) {
    absl::MutexLock lock(&replies_mu);
    replies_owed += delta;
  }
  std::atomic<bool> stopped{false};
  int port = 0;
  std::string busy_message;  // why a connection over the cap is refused
  std::string busy;          // the 503 written at once when too many wait for theirs
  transport_internal::ConnectionMetrics metrics;  // none without Options::registry
  std::unique_ptr<ssl::context> tls;
  asio::io_context ioc;
  tcp::acceptor acceptor{asio::make_strand(ioc)};
  asio::steady_timer accept_backoff{acceptor.get_executor()};
  asio::thread_pool pool;  // destroyed before ioc: its queued tasks hold sessions
  std::vector<std::thread> io_threads;

  explicit Impl(int workers) : pool(static_cast<size_t>(std::max(1, workers))) {}

  void Closed(const char* reason) {
    auto it = metrics.closed.find(reason);
    if (it != metrics.closed.end()) it->second->Increment();
  }
  HttpResponse Error(int status, const std::string& message, const HttpRequest& head) const {
    HttpResponse r;
    if (options.error_response) {
      r = options.error_response(status, message, head);
    } else {
      r.status = status;
      r.content_type = "text/plain";
      r.body = message + "\n";
    }
    if (status == 503) r.headers.emplace_back("Retry-After", "1");
    return r;
  }
  void Accept();
  void OnAccepted(tcp::socket socket);
  void Refuse(std::shared_ptr<tcp::socket> socket);
  std::atomic<int> refusing{0};  // over-cap connections waiting for their 503
};

namespace {

// One connection. Every callback runs on the connection's strand; the
// blocking handler alone runs on the worker pool (the async one on the
// strand, its reply wherever it comes from).
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  Session(HttpTransport::Impl* t, Stream stream, std::string peer_ip)
      : t_(t),
        limits_(t->options.limits),
        stream_(std::move(stream)),
        buffer_(limits_.max_header_bytes + 4096),
        timer_(stream_.get_executor()),
        peer_ip_(std::move(peer_ip)) {}
  ~Session() {
    --t_->open;
    if (t_->metrics.open != nullptr) t_->metrics.open->Decrement();
  }

  void Start() {
    Arm(limits_.header_timeout);  // covers the handshake and the first request's headers
    if constexpr (kTls) {
      phase_ = Phase::kHandshake;
      stream_.async_handshake(
          ssl::stream_base::server, [self = this->shared_from_this()](error_code ec) {
            if (ec) {
              self->t_->Closed(self->timed_out_ ? "header_timeout" : "tls_handshake");
              return self->Close();
            }
            self->identity_ = CertificateIdentity(self->stream_.native_handle());
            self->ReadHeader();
          });
    } else {
      ReadHeader();
    }
  }

 private:
  enum class Phase { kHandshake, kIdle, kHeader, kBody, kHandling, kWriting, kDraining, kClosed };

  // One deadline at a time; a later Arm() or Disarm() voids the earlier one.
  void Arm(absl::Duration d) {
    const uint64_t generation = ++generation_;
    timed_out_ = false;
    timer_.expires_after(Chrono(d));
    timer_.async_wait([self = this->shared_from_this(), generation](error_code ec) {
      if (ec || generation != self->generation_) return;
      self->timed_out_ = true;
      error_code ignored;
      Socket(self->stream_).cancel(ignored);
    });
  }
  void Disarm() {
    ++generation_;
    timer_.cancel();
  }

  void ReadHeader() {
    phase_ = Phase::kHeader;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(limits_.max_header_bytes));
    parser_->body_limit(limits_.max_body_bytes);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(error_code ec) {
    if (ec) return Fail(ec);
    const auto& header = parser_->get();
    method_ = std::string(header.method_string());
    target_ = std::string(header.target());
    if (std::distance(header.begin(), header.end()) > limits_.max_header_count) {
      return Reject(431,
                    absl::StrCat("headers: more than ", limits_.max_header_count, " header fields"),
                    "header_too_large");
    }
    phase_ = Phase::kBody;
    Arm(limits_.body_timeout);
    if (parser_->is_done()) return OnBody({});
    if (absl::EqualsIgnoreCase(std::string(header[bhttp::field::expect]), "100-continue")) {
      static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      return asio::async_write(stream_, asio::buffer(kContinue, sizeof(kContinue) - 1),
                               [self = this->shared_from_this()](error_code write_ec, size_t) {
                                 if (write_ec) return self->Fail(write_ec);
                                 self->ReadBody();
                               });
    }
    ReadBody();
  }

  void ReadBody() {
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = this->shared_from_this()](error_code ec, size_t) {
                        if (ec) return self->Fail(ec);
                        self->OnBody({});
                      });
  }

  void OnBody(error_code) {
    Disarm();
    phase_ = Phase::kHandling;
    bhttp::request<bhttp::string_body> message = parser_->release();
    keep_alive_ = message.keep_alive();
    auto request = std::make_shared<HttpRequest>();
    request->method = method_;
    request->target = target_;
    const size_t question = target_.find('?');
    request->path = target_.substr(0, question);
    if (question != std::string::npos) request->query = target_.substr(question + 1);
    for (const auto& field : message) {
      request->headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request->body = std::move(message.body());
    request->peer_ip = peer_ip_;
    request->tls = kTls;
    request->client_certificate = identity_;
    ++t_->in_flight;
    // The answer is written on this connection's strand: at once when the
    // reply comes on it, else posted to it. The reply hands its hold on the
    // session over to that write (a reply kept after it was called holds
    // nothing).
    HttpTransport::Reply reply = [self = this->shared_from_this()](HttpResponse response) mutable {
      auto session = std::move(self);
      auto executor = session->stream_.get_executor();
      asio::dispatch(executor,
                     [session = std::move(session), response = std::move(response)]() mutable {
                       --session->t_->in_flight;
                       session->Write(std::move(response));
                     });
    };
    if (t_->async_handler && OfferAsync(request, reply)) return;
    asio::post(t_->pool, [t = t_, request, reply = std::move(reply)] {
      HttpResponse response;
      try {
        response = t->handler(*request);
      } catch (const std::exception& e) {
        response = t->Error(500, absl::StrCat("internal: ", e.what()), *request);
      }
      reply(std::move(response));
    });
  }

  // Offers the request to the asynchronous handler: true when it took it.
  // Its reply is owed until called (Stop() waits for it: it may come from a
  // backend's thread after the grace, and it writes into this transport).
  bool OfferAsync(const std::shared_ptr<const HttpRequest>& request,
                  const HttpTransport::Reply& reply) {
    HttpTransport::Impl* const t = t_;
    t->OweReply(+1);
    HttpTransport::Reply owed = [t, reply = reply](HttpResponse response) mutable {
      std::exchange(reply, nullptr)(std::move(response));
      t->OweReply(-1);
    };
    try {
      if (t->async_handler(request, owed)) return true;
    } catch (const std::exception& e) {
      owed(t->Error(500, absl::StrCat("internal: ", e.what()), *request));
      return true;
    }
    t->OweReply(-1);  // not taken: the worker pool answers
    return false;
  }

  // A read that ended early: a deadline, a limit, a malformed request or the
  // client going away.
  void Fail(error_code ec) {
    if (timed_out_) {
      const bool partial = phase_ == Phase::kBody || (parser_.has_value() && parser_->got_some()) ||
                           buffer_.size() > 0;
      const char* reason = phase_ == Phase::kBody ? "body_timeout" : "header_timeout";
      if (!partial) {
        t_->Closed(phase_ == Phase::kHeader && requests_ > 0 ? "idle_timeout" : reason);
        return Close();
      }
      const absl::Duration limit =
          phase_ == Phase::kBody ? limits_.body_timeout : limits_.header_timeout;
      return Reject(408,
                    absl::StrCat(phase_ == Phase::kBody ? "body" : "headers",
                                 ": not received within ", absl::FormatDuration(limit)),
                    reason);
    }
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      return Reject(431, absl::StrCat("headers: more than ", limits_.max_header_bytes, " bytes"),
                    "header_too_large");
    }
    if (ec == bhttp::error::body_limit) {
      return Reject(413, absl::StrCat("body: more than ", limits_.max_body_bytes, " bytes"),
                    "body_too_large");
    }
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
      return Reject(400, absl::StrCat("request: ", ec.message()), "bad_request");
    }
    Close();
  }

  void Reject(int status, const std::string& message, const char* reason) {
    t_->Closed(reason);
    keep_alive_ = false;
    Write(t_->Error(status, message, Head()));
  }

  // What was read of the request being rejected: every field once the
  // headers ended, else the complete lines still in the read buffer.
  HttpRequest Head() const {
    // The lines still in the read buffer (the parser keeps the last field
    // until it sees the next line), after the fields the parser took.
    const auto data = buffer_.cdata();
    HttpRequest head =
        HeadFromBytes(absl::string_view(static_cast<const char*>(data.data()), data.size()));
    if (parser_.has_value() && parser_->get().begin() != parser_->get().end()) {
      std::vector<std::pair<std::string, std::string>> fields;
      for (const auto& field : parser_->get()) {
        fields.emplace_back(std::string(field.name_string()), std::string(field.value()));
      }
      fields.insert(fields.end(), head.headers.begin(), head.headers.end());
      head.headers = std::move(fields);
      head.method = std::string(parser_->get().method_string());
      head.target = std::string(parser_->get().target());
    }
    head.peer_ip = peer_ip_;
    head.tls = kTls;
    return head;
  }

  void Write(HttpResponse response) {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kWriting;
    ++requests_;
    const bool keep =
        keep_alive_ && requests_ < limits_.max_requests_per_connection && !t_->stopped.load();
    response_ = std::make_unique<bhttp::response<bhttp::string_body>>();
    response_->version(11);
    response_->result(static_cast<unsigned>(response.status));
    response_->set(bhttp::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) response_->insert(name, value);
    response_->body() = std::move(response.body);
    response_->keep_alive(keep);
    response_->prepare_payload();
    if (t_->options.observe) t_->options.observe(method_, target_, response.status);
    Arm(limits_.write_timeout);
    bhttp::async_write(stream_, *response_,
                       [self = this->shared_from_this(), keep](error_code ec, size_t) {
                         self->response_.reset();
                         if (ec) {
                           if (self->timed_out_) self->t_->Closed("write_timeout");
                           return self->Close();
                         }
                         if (!keep) return self->Drain();
                         self->WaitIdle();
                       });
  }

  // Waits for the next request without a read buffer or a parser.
  void WaitIdle() {
    phase_ = Phase::kIdle;
    bool pending = buffer_.size() > 0;
    if constexpr (kTls) pending = pending || SSL_pending(stream_.native_handle()) > 0;
    if (pending) {
      Arm(limits_.header_timeout);
      return ReadHeader();
    }
    Arm(limits_.idle_timeout);
    Socket(stream_).async_wait(tcp::socket::wait_read,
                               [self = this->shared_from_this()](error_code ec) {
                                 if (ec) {
                                   if (self->timed_out_) self->t_->Closed("idle_timeout");
                                   return self->Close();
                                 }
                                 self->Arm(self->limits_.header_timeout);
                                 self->ReadHeader();
                               });
  }

  // After a last answer: stop sending and discard what the client still
  // sends for a moment, so the answer is not lost to a reset.
  void Drain() {
    phase_ = Phase::kDraining;
    error_code ignored;
    Socket(stream_).shutdown(tcp::socket::shutdown_send, ignored);
    Arm(absl::Seconds(1));
    DrainSome();
  }
  void DrainSome() {
    Socket(stream_).async_read_some(asio::buffer(drain_),
                                    [self = this->shared_from_this()](error_code ec, size_t n) {
                                      self->drained_ += n;
                                      if (ec || self->drained_ > (1 << 20)) return self->Close();
                                      self->DrainSome();
                                    });
  }

  void Close() {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kClosed;
    Disarm();
    error_code ignored;
    Socket(stream_).shutdown(tcp::socket::shutdown_both, ignored);
    Socket(stream_).close(ignored);
  }

  HttpTransport::Impl* const t_;
  const HttpLimits& limits_;
  Stream stream_;
  beast::flat_buffer buffer_;
  asio::steady_timer timer_;
  const std::string peer_ip_;
  std::string identity_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::unique_ptr<bhttp::response<bhttp::string_body>> response_;
  std::string method_, target_;
  Phase phase_ = Phase::kHeader;
  uint64_t generation_ = 0;
  bool timed_out_ = false;
  bool keep_alive_ = true;
  int requests_ = 0;
  size_t drained_ = 0;
  std::array<char, 4096> drain_{};
};

}  // namespace

void HttpTransport::Impl::Accept() {
  acceptor.async_accept(asio::make_strand(ioc), [this](error_code ec, tcp::socket socket) {
    if (stopped.load() || !acceptor.is_open()) return;
    if (ec) {
      // Out of descriptors or memory: retry shortly instead of spinning.
      accept_backoff.expires_after(std::chrono::milliseconds(50));
      accept_backoff.async_wait([this](error_code e) {
        if (!e) Accept();
      });
      return;
    }
    OnAccepted(std::move(socket));
    Accept();
  });
}

void HttpTransport::Impl::OnAccepted(tcp::socket socket) {
  error_code ec;
  if (open.load() >= options.limits.max_connections) {
    if (metrics.refused != nullptr) metrics.refused->Increment();
    if (!tls && refusing.load() < kMaxRefusing) {
      // Wait a moment for the request's head, so the 503 carries its
      // request id and CORS headers like every other answer.
      ++refusing;
      auto waiting = std::make_shared<tcp::socket>(std::move(socket));
      auto timer = std::make_shared<asio::steady_timer>(waiting->get_executor(), kRefusalWait);
      timer->async_wait([this, waiting, timer](error_code) { Refuse(waiting); });
      return;
    }
    if (!tls) {
      (void)::send(socket.native_handle(), busy.data(), busy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (options.observe) options.observe("", "", 503);
    }
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
    return;
  }
  ++open;
  if (metrics.open != nullptr) metrics.open->Increment();
  socket.set_option(tcp::no_delay(true), ec);
  const tcp::endpoint peer = socket.remote_endpoint(ec);
  std::string ip = ec ? std::string() : peer.address().to_string();
  if (tls) {
    std::make_shared<Session<TlsStream>>(this, TlsStream(std::move(socket), *tls), std::move(ip))
        ->Start();
  } else {
    std::make_shared<Session<tcp::socket>>(this, std::move(socket), std::move(ip))->Start();
  }
}

// Answers an over-cap connection 503 with what it sent of its request (read
// without blocking, at most 16 KiB), then closes it.
void HttpTransport::Impl::Refuse(std::shared_ptr<tcp::socket> socket) {
  std::string bytes(16 << 10, '\0');
  const ssize_t n = ::recv(socket->native_handle(), bytes.data(), bytes.size(), MSG_DONTWAIT);
  bytes.resize(n > 0 ? static_cast<size_t>(n) : 0);
  const HttpRequest head = HeadFromBytes(bytes);
  const std::string answer = Serialize(Error(503, busy_message, head));
  (void)::send(socket->native_handle(), answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (options.observe) options.observe(head.method, head.target, 503);
  error_code ec;
  socket->shutdown(tcp::socket::shutdown_send, ec);
  socket->close(ec);
  --refusing;
}

absl::StatusOr<std::unique_ptr<HttpTransport>> HttpTransport::Start(Options options,
                                                                    Handler handler,
                                                                    AsyncHandler async) {
  std::unique_ptr<HttpTransport> transport(new HttpTransport());
  transport->impl_ = std::make_unique<Impl>(options.worker_threads);
  Impl& t = *transport->impl_;
  t.options = std::move(options);
  t.handler = std::move(handler);
  t.async_handler = std::move(async);
  if (t.options.tls.enabled()) {
    absl::StatusOr<std::unique_ptr<ssl::context>> context =
        MakeTlsContext(t.options.tls, t.options.client_auth);
    if (!context.ok()) return context.status();
    t.tls = *std::move(context);
  }
  if (t.options.registry != nullptr) {
    t.metrics = transport_internal::RegisterConnectionMetrics(*t.options.registry);
  }
  absl::StatusOr<tcp::endpoint> endpoint = Endpoint(t.options.host, t.options.port);
  if (!endpoint.ok()) return endpoint.status();
  error_code ec;
  t.acceptor.open(endpoint->protocol(), ec);
  // SO_REUSEADDR only (restart after TIME_WAIT); never SO_REUSEPORT, which
  // would let a second gateway share a busy port silently.
  if (!ec) t.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) t.acceptor.bind(*endpoint, ec);
  if (!ec) t.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("http: cannot bind ", t.options.host, ":",
                                               t.options.port, ": ", ec.message()));
  }
  t.port = t.acceptor.local_endpoint().port();
  t.busy_message = absl::StrCat("connections: ", t.options.limits.max_connections,
                                " open, the most this server takes; retry later");
  t.busy = Serialize(t.Error(503, t.busy_message, HttpRequest{}));
  t.Accept();
  for (int i = 0; i < std::max(1, t.options.io_threads); ++i) {
    t.io_threads.emplace_back([&t] { t.ioc.run(); });
  }
  return transport;
}

int HttpTransport::port() const { return impl_->port; }

int HttpTransport::connections() const { return impl_->open.load(); }

void HttpTransport::Stop(absl::Duration grace) {
  if (impl_ == nullptr || impl_->stopped.exchange(true)) return;
  Impl& t = *impl_;
  if (t.io_threads.empty()) return;  // Start() failed before serving
  std::promise<void> closed;
  asio::post(t.acceptor.get_executor(), [&t, &closed] {
    error_code ignored;
    t.acceptor.close(ignored);
    t.accept_backoff.cancel();
    closed.set_value();
  });
  closed.get_future().wait_for(std::chrono::seconds(2));
  const absl::Time until = absl::Now() + grace;
  while (t.in_flight.load() > 0 && absl::Now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  t.ioc.stop();
  for (std::thread& thread : t.io_threads) thread.join();
  t.pool.stop();
  t.pool.join();
  // A reply still owed comes from a handler that outlived the grace (an
  // asynchronous route waiting on its backend deadline); it writes into
  // this transport, so wait for it rather than free what it reads.
  absl::MutexLock lock(&t.replies_mu);
  t.replies_mu.Await(absl::Condition(
      +[](int* owed) { return *owed == 0; }, &t.replies_owed));
}

HttpTransport::~HttpTransport() { Stop(); }

}  // namespace gpuadvisor::gateway::http
