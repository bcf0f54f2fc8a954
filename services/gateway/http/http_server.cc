#include "services/gateway/http/http_server.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <random>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/grpc/client_address.h"
#include "common/grpc/rate_limiter.h"
#include "common/status/grpc_status.h"
#include "google/protobuf/descriptor.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/generic/generic_stub.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "services/gateway/export.h"
#include "services/gateway/http/api_routes.h"
#include "services/gateway/http/openapi.h"
#include "services/gateway/http/proto_json.h"
#include "services/gateway/http/web_assets.h"

namespace gpuadvisor::gateway::http {
namespace {

using google::protobuf::Message;
using ProtoStub = grpc::TemplatedGenericStub<Message, Message>;

constexpr char kJson[] = "application/json";

HttpResponse ErrorResponse(const absl::Status& status, int http_status = 0) {
  HttpResponse res;
  res.status = http_status != 0 ? http_status : HttpStatusFor(status.code());
  res.body = ErrorJson(status);
  return res;
}

HttpResponse JsonResponse(std::string body) {
  HttpResponse res;
  res.body = std::move(body);
  return res;
}

// What a route handler sees besides the request: the id and client key the
// in-process call carries.
struct CallInfo {
  std::string request_id;
  std::string client_key;
};
using RouteHandler = std::function<HttpResponse(const HttpRequest&, const CallInfo&)>;
// A route that answers without blocking, on the connection's event-loop
// thread (HttpTransport::AsyncHandler); calls `reply` once, from any thread.
using AsyncRouteHandler =
    std::function<void(const HttpRequest&, const CallInfo&, HttpTransport::Reply reply)>;

std::unique_ptr<Message> NewMessage(const google::protobuf::Descriptor* descriptor) {
  return std::unique_ptr<Message>(
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(descriptor)->New());
}

// One unary call on `channel`, blocking this worker thread until it ends.
grpc::Status CallUnary(const std::shared_ptr<grpc::Channel>& channel, const std::string& path,
                       absl::Duration timeout, const CallInfo& info, const Message& request,
                       Message* response) {
  ProtoStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::microseconds(absl::ToInt64Microseconds(timeout)));
  context.AddMetadata("x-request-id", info.request_id);
  context.AddMetadata(std::string(PeerRateLimiter::kClientKeyMetadata), info.client_key);
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, path, grpc::StubOptions(), &request, response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  return done.get_future().get();
}

// %XX and '+' of a query component.
std::string UrlDecode(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    int value = 0;
    if (c == '%' && i + 2 < text.size() && absl::ascii_isxdigit(text[i + 1]) &&
        absl::ascii_isxdigit(text[i + 2])) {
      const std::string hex(text.substr(i + 1, 2));
      value = static_cast<int>(std::strtol(hex.c_str(), nullptr, 16));
      out.push_back(static_cast<char>(value));
      i += 2;
    } else {
      out.push_back(c == '+' ? ' ' : c);
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> QueryParams(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> params;
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const size_t eq = pair.find('=');
    params.emplace_back(UrlDecode(pair.substr(0, eq)),
                        eq == absl::string_view::npos ? "" : UrlDecode(pair.substr(eq + 1)));
  }
  return params;
}

// Reads the request message of `route` from the body (POST) or the query
// (GET); `format` and `alternative` get ?format= and ?alternative=N (the
// N-th shape's export file) of an export route.
absl::Status ReadRequest(const ApiRoute& route, const HttpRequest& req, Message* request,
                         std::string* format, int* alternative) {
  std::vector<std::pair<std::string, std::string>> params = QueryParams(req.query);
  if (route.exports) {
    for (const auto& [key, value] : params) {
      if (key == "format") *format = value;
      if (key == "alternative" && (!absl::SimpleAtoi(value, alternative) || *alternative < 1)) {
        return absl::InvalidArgumentError("alternative: must be an integer >= 1");
      }
    }
  }
  if (route.http_method != "POST") return SetFieldsFromQuery(params, {}, request);
  for (const auto& [key, value] : params) {
    if ((key == "format" || key == "alternative") && route.exports) continue;
    return absl::InvalidArgumentError(
        absl::StrCat(key, ": unknown parameter; send the request fields as the JSON body"));
  }
  return ParseJsonBody(req.body, request);
}

// A route's request as read from the HTTP request: the message, and an
// export route's ?format= and ?alternative=.
struct ReadCall {
  std::unique_ptr<Message> request;
  std::string format = "json";
  ExportFormat export_format = ExportFormat::kSkyPilot;
  int alternative = 1;
};

absl::StatusOr<ReadCall> ReadCallOf(const ApiRoute& route, const HttpRequest& req) {
  ReadCall call;
  call.request = NewMessage(route.method->input_type());
  if (absl::Status read =
          ReadRequest(route, req, call.request.get(), &call.format, &call.alternative);
      !read.ok()) {
    return read;
  }
  if (call.format != "json") {
    absl::StatusOr<ExportFormat> export_format = ParseExportFormat(call.format);
    if (!export_format.ok()) return export_format.status();
    call.export_format = *export_format;
  }
  return call;
}

// The answer of a call that succeeded: its JSON, or the export file asked
// for.
HttpResponse Answered(const ReadCall& call, const Message& response) {
  if (call.format == "json") return JsonResponse(ToJson(response));
  absl::StatusOr<ExportFile> exported =
      ExportAnswer(call.export_format, static_cast<const v1::RecommendRequest&>(*call.request),
                   static_cast<const v1::RecommendResponse&>(response), call.alternative);
  if (!exported.ok()) return ErrorResponse(exported.status());
  HttpResponse res;
  res.content_type = "application/yaml";
  // What the file leaves out and how many files the answer has, also in
  // the file's header comment (docs/http.md).
  res.headers.emplace_back("X-Export-Alternatives", std::to_string(exported->alternatives));
  if (!exported->left_out.empty()) {
    res.headers.emplace_back("X-Export-Left-Out", ExportHeaderValue(exported->left_out));
  }
  res.body = std::move(exported->text);
  return res;
}

RouteHandler ApiHandler(const ApiRoute& route, std::shared_ptr<grpc::Channel> channel,
                        absl::Duration timeout) {
  const std::string path =
      absl::StrCat("/", route.method->service()->full_name(), "/", route.method->name());
  return [route, path, channel, timeout](const HttpRequest& req, const CallInfo& info) {
    absl::StatusOr<ReadCall> call = ReadCallOf(route, req);
    if (!call.ok()) return ErrorResponse(call.status());
    std::unique_ptr<Message> response = NewMessage(route.method->output_type());
    const grpc::Status status =
        CallUnary(channel, path, timeout, info, *call->request, response.get());
    if (!status.ok()) return ErrorResponse(FromGrpcStatus(status));
    return Answered(*call, *response);
  };
}

// POST /v1/recommend in process (Options::recommend): no worker thread, no
// gRPC encoding; the answer is printed on the thread that completes it.
AsyncRouteHandler LocalRecommendHandler(const ApiRoute& route,
                                        HttpServer::Options::RecommendFn recommend,
                                        absl::Duration timeout) {
  return [route, recommend, timeout](const HttpRequest& req, const CallInfo& info,
                                     HttpTransport::Reply reply) {
    absl::StatusOr<ReadCall> read = ReadCallOf(route, req);
    if (!read.ok()) return reply(ErrorResponse(read.status()));
    auto call = std::make_shared<ReadCall>(*std::move(read));
    // An export reads the request again with the answer; JSON does not.
    auto& request = static_cast<v1::RecommendRequest&>(*call->request);
    v1::RecommendRequest sent;
    if (call->format == "json") {
      sent.Swap(&request);
    } else {
      sent = request;
    }
    recommend(
        {.client_key = info.client_key,
         .request_id = info.request_id,
         .deadline = absl::Now() + timeout},
        std::move(sent),
        [call, reply = std::move(reply)](absl::StatusOr<const v1::RecommendResponse*> answer) {
          reply(answer.ok() ? Answered(*call, **answer) : ErrorResponse(answer.status()));
        });
  };
}

RouteHandler HealthHandler(std::shared_ptr<grpc::Channel> channel, std::string service) {
  return [channel, service](const HttpRequest&, const CallInfo&) {
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    const grpc::Status status =
        grpc::health::v1::Health::NewStub(channel)->Check(&context, request, &response);
    const bool serving =
        status.ok() && response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
    const std::string state =
        status.ok() ? grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status())
                    : "NOT_SERVING";
    HttpResponse res = JsonResponse(absl::StrCat("{\"status\":\"", state, "\"}"));
    res.status = serving ? 200 : 503;
    return res;
  };
}

// A request id from the client is kept when it is short and plain; else one
// is made (16 hex digits).
std::string RequestId(const HttpRequest& req) {
  std::string id = req.Header("x-request-id");
  const bool plain =
      !id.empty() && id.size() <= 128 && std::all_of(id.begin(), id.end(), [](char c) {
        return absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.';
      });
  if (plain) return id;
  thread_local std::mt19937_64 random(std::random_device{}());
  char made[17];
  std::snprintf(made, sizeof(made), "%016llx", static_cast<unsigned long long>(random()));
  return made;
}

}  // namespace

// Path -> method -> handler, the CORS policy and the request metrics.
class Router {
 public:
  Router(const HttpServer::Options& options, ProxyRanges proxies)
      : proxies_(std::move(proxies)),
        cors_(options.cors_origins),
        log_requests_(options.log_requests) {
    if (options.registry != nullptr) {
      requests_ = &prometheus::BuildCounter()
                       .Name("gpuadvisor_http_requests_total")
                       .Help(
                           "HTTP requests answered, by route (the path template, \"other\" for "
                           "unknown paths) and HTTP status code.")
                       .Register(*options.registry);
    }
  }

  void Add(const std::string& method, const std::string& path, RouteHandler handler) {
    routes_[path][method].handler = std::move(handler);
  }
  // The route's answer without a worker thread (its blocking handler stays
  // for nothing but the method list).
  void AddAsync(const std::string& method, const std::string& path, AsyncRouteHandler handler) {
    routes_[path][method].async = std::move(handler);
  }

  // The transport's offer (HttpTransport::AsyncHandler): true when the
  // route answers without blocking, with the same request id, CORS headers
  // and log line as every other answer.
  bool Offer(const std::shared_ptr<const HttpRequest>& req,
             const HttpTransport::Reply& reply) const {
    auto route = routes_.find(req->path);
    if (route == routes_.end()) return false;
    auto handler = route->second.find(req->method);
    if (handler == route->second.end() || !handler->second.async) return false;
    const absl::Time start = absl::Now();
    auto info = std::make_shared<const CallInfo>(CallInfo{RequestId(*req), ClientKey(*req)});
    handler->second.async(*req, *info, [this, req, info, start, reply](HttpResponse res) {
      Finish(*req, *info, start, &res);
      reply(std::move(res));
    });
    return true;
  }

  HttpResponse Handle(const HttpRequest& req) const {
    const absl::Time start = absl::Now();
    CallInfo info{RequestId(req), ClientKey(req)};
    HttpResponse res = Dispatch(req, info);
    Finish(req, info, start, &res);
    return res;
  }

  // The transport's own answers (408, 413, 431, 503, 400: `error` in the
  // API's shape) with the request id and CORS headers of every other
  // answer, from what was read of the request.
  HttpResponse Transport(HttpResponse error, const HttpRequest& head) const {
    CallInfo info{RequestId(head), ClientKey(head)};
    HttpRequest req = head;
    req.path = head.target.substr(0, head.target.find('?'));
    Finish(req, info, absl::Now(), &error);
    return error;
  }

  // Counts an answer (the transport calls this for every one it writes).
  void Observe(const std::string& target, int status) const {
    if (requests_ == nullptr) return;
    const std::string path = target.substr(0, target.find('?'));
    const std::string route = routes_.count(path) > 0 ? path : "other";
    requests_->Add({{"route", route}, {"code", std::to_string(status)}}).Increment();
  }

 private:
  HttpResponse Dispatch(const HttpRequest& req, const CallInfo& info) const {
    auto route = routes_.find(req.path);
    if (route == routes_.end()) return ErrorResponse(absl::NotFoundError("no such path"));
    const auto& methods = route->second;
    std::vector<std::string> allowed;
    for (const auto& [method, unused] : methods) allowed.push_back(method);
    if (methods.count("GET") > 0) allowed.push_back("HEAD");
    allowed.push_back("OPTIONS");
    const std::string allow = absl::StrJoin(allowed, ", ");
    const std::string method = req.method == "HEAD" ? "GET" : req.method;
    if (auto handler = methods.find(method); handler != methods.end()) {
      HttpResponse res = handler->second.handler(req, info);
      if (req.method == "HEAD") res.body.clear();
      return res;
    }
    if (req.method == "OPTIONS") {
      HttpResponse res;
      res.status = 204;
      res.headers.emplace_back("Allow", allow);
      return res;
    }
    HttpResponse res = ErrorResponse(
        absl::UnimplementedError(absl::StrCat("method: ", req.method, " is not allowed on ",
                                              req.path, "; allowed: ", allow)),
        405);
    res.headers.emplace_back("Allow", allow);
    return res;
  }

  // Every answer: its request id, CORS headers and the log line.
  void Finish(const HttpRequest& req, const CallInfo& info, absl::Time start,
              HttpResponse* res) const {
    res->headers.emplace_back("X-Request-Id", info.request_id);
    AddCors(req, res);
    if (log_requests_ || res->status >= 400) {
      std::fprintf(stderr, "http: request_id=%s client=%s method=%s path=%s status=%d ms=%.1f\n",
                   info.request_id.c_str(), info.client_key.c_str(), req.method.c_str(),
                   req.path.c_str(), res->status, absl::ToDoubleMilliseconds(absl::Now() - start));
    }
  }

  std::string ClientKey(const HttpRequest& req) const {
    if (!req.client_certificate.empty()) return absl::StrCat("cert:", req.client_certificate);
    return ClientAddress(req.peer_ip, req.Header("x-forwarded-for"), req.Header("forwarded"),
                         proxies_);
  }

  void AddCors(const HttpRequest& req, HttpResponse* res) const {
    if (cors_.empty()) return;
    const std::string origin = req.Header("origin");
    if (origin.empty()) return;
    const bool any = std::find(cors_.begin(), cors_.end(), "*") != cors_.end();
    if (!any && std::find(cors_.begin(), cors_.end(), origin) == cors_.end()) return;
    res->headers.emplace_back("Access-Control-Allow-Origin", any ? "*" : origin);
    res->headers.emplace_back("Vary", "Origin");
    res->headers.emplace_back("Access-Control-Expose-Headers", "X-Request-Id");
    if (req.method == "OPTIONS") {
      res->headers.emplace_back("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res->headers.emplace_back("Access-Control-Allow-Headers", "Content-Type, X-Request-Id");
      res->headers.emplace_back("Access-Control-Max-Age", "600");
    }
  }

  struct Route {
    RouteHandler handler;
    AsyncRouteHandler async;  // set: answers instead of `handler`
  };
  std::map<std::string, std::map<std::string, Route>> routes_;
  ProxyRanges proxies_;
  std::vector<std::string> cors_;
  bool log_requests_;
  prometheus::Family<prometheus::Counter>* requests_ = nullptr;
};

namespace {

void AddRoutes(Router& router, const std::shared_ptr<grpc::Channel>& channel,
               const HttpServer::Options& options) {
  const std::vector<ApiRoute> routes = GatewayRoutes(GatewayServiceDescriptor());
  for (const ApiRoute& route : routes) {
    router.Add(route.http_method, route.path, ApiHandler(route, channel, options.call_timeout));
    if (options.recommend && route.method->name() == "Recommend") {
      router.AddAsync(route.http_method, route.path,
                      LocalRecommendHandler(route, options.recommend, options.call_timeout));
    }
  }
  router.Add("GET", kHealthPath, HealthHandler(channel, options.health_service));
  const std::unique_ptr<google::protobuf::DescriptorPool> documented =
      PoolFromDescriptorSet(GatewayDescriptorSet());
  const std::string openapi = OpenApiJson(routes, ExportFormatNames(), documented.get());
  router.Add("GET", kOpenApiPath,
             [openapi](const HttpRequest&, const CallInfo&) { return JsonResponse(openapi); });
  for (const WebAsset& asset : WebAssets()) {
    HttpResponse page;
    page.content_type = asset.content_type;
    page.body.assign(reinterpret_cast<const char*>(asset.data), asset.size);
    page.headers.emplace_back("Cache-Control", "no-cache");
    auto serve = [page](const HttpRequest&, const CallInfo&) { return page; };
    router.Add("GET", asset.path, serve);
    if (std::string(asset.path) == "/index.html") router.Add("GET", "/", serve);
  }
}

// The transport's own answers (408, 413, 431, 503, 400) in the API's error
// shape, with the gRPC code each stands for.
HttpResponse TransportError(int status, const std::string& message) {
  absl::StatusCode code = absl::StatusCode::kInvalidArgument;
  if (status == 408) code = absl::StatusCode::kDeadlineExceeded;
  if (status == 413 || status == 431) code = absl::StatusCode::kResourceExhausted;
  if (status == 503) code = absl::StatusCode::kUnavailable;
  if (status >= 500 && status != 503) code = absl::StatusCode::kInternal;
  return ErrorResponse(absl::Status(code, message), status);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    std::shared_ptr<grpc::Channel> channel, const Options& options) {
  absl::StatusOr<ProxyRanges> proxies = ProxyRanges::Parse(options.trusted_proxies);
  if (!proxies.ok()) return proxies.status();
  auto router = std::make_shared<Router>(options, *std::move(proxies));
  AddRoutes(*router, channel, options);

  HttpTransport::Options transport;
  transport.host = options.host;
  transport.port = options.port;
  transport.io_threads = options.io_threads;
  transport.worker_threads = options.threads;
  transport.limits = options.limits;
  transport.tls = options.tls;
  transport.client_auth = options.client_auth;
  transport.registry = options.registry;
  transport.error_response = [router](int status, const std::string& message,
                                      const HttpRequest& head) {
    return router->Transport(TransportError(status, message), head);
  };
  transport.observe = [router](const std::string&, const std::string& target, int status) {
    router->Observe(target, status);
  };
  absl::StatusOr<std::unique_ptr<HttpTransport>> started = HttpTransport::Start(
      std::move(transport), [router](const HttpRequest& req) { return router->Handle(req); },
      [router](std::shared_ptr<const HttpRequest> req, const HttpTransport::Reply& reply) {
        return router->Offer(req, reply);
      });
  if (!started.ok()) return started.status();
  std::unique_ptr<HttpServer> http(new HttpServer());
  http->transport_ = *std::move(started);
  http->tls_ = options.tls.enabled();
  return http;
}

void HttpServer::Stop() {
  if (transport_ != nullptr) transport_->Stop();
}

HttpServer::~HttpServer() { Stop(); }

}  // namespace gpuadvisor::gateway::http
