#include "services/gateway/http/http_server.h"

#include <sys/socket.h>

#include <chrono>
#include <future>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/dynamic_message.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/generic/generic_stub.h"
#include "httplib.h"
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

void SendError(httplib::Response& res, const absl::Status& status) {
  res.status = HttpStatusFor(status.code());
  res.set_content(ErrorJson(status), kJson);
}

std::unique_ptr<Message> NewMessage(const google::protobuf::Descriptor* descriptor) {
  return std::unique_ptr<Message>(
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(descriptor)->New());
}

// One unary call on `channel`, blocking this handler thread until it ends.
grpc::Status CallUnary(const std::shared_ptr<grpc::Channel>& channel, const std::string& path,
                       absl::Duration timeout, const Message& request, Message* response) {
  ProtoStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::microseconds(absl::ToInt64Microseconds(timeout)));
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, path, grpc::StubOptions(), &request, response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  return done.get_future().get();
}

// The URL's query parameters only: httplib also files a form-encoded body
// under req.params, and `curl -d` labels JSON bodies that way.
std::vector<std::pair<std::string, std::string>> QueryParams(const httplib::Request& req) {
  const size_t question = req.target.find('?');
  if (question == std::string::npos) return {};
  httplib::Params params;
  httplib::detail::parse_query_text(req.target.substr(question + 1), params);
  return {params.begin(), params.end()};
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    std::shared_ptr<grpc::Channel> channel, const Options& options) {
  std::unique_ptr<HttpServer> http(new HttpServer());
  http->server_ = std::make_unique<httplib::Server>();
  httplib::Server& server = *http->server_;
  const int threads = options.threads;
  server.new_task_queue = [threads] {
    return new httplib::ThreadPool(static_cast<size_t>(threads));
  };
  server.set_payload_max_length(options.max_body_bytes);
  // httplib's default adds SO_REUSEPORT, which would let a second gateway
  // share a busy port silently; keep only SO_REUSEADDR (restart after TIME_WAIT).
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // Small JSON answers on kept-alive connections: without TCP_NODELAY, Nagle
  // and delayed ACKs add tens of milliseconds to each one.
  server.set_tcp_nodelay(true);
  server.set_read_timeout(10, 0);
  server.set_write_timeout(30, 0);

  const google::protobuf::ServiceDescriptor* service = GatewayServiceDescriptor();
  const std::vector<ApiRoute> routes = GatewayRoutes(service);
  for (const ApiRoute& route : routes) {
    const std::string path =
        absl::StrCat("/", route.method->service()->full_name(), "/", route.method->name());
    auto handler = [route, path, channel, timeout = options.call_timeout](
                       const httplib::Request& req, httplib::Response& res) {
      std::unique_ptr<Message> request = NewMessage(route.method->input_type());
      std::string format = "json";
      std::vector<std::pair<std::string, std::string>> params = QueryParams(req);
      int alternative = 1;  // ?alternative=N: the N-th shape's export file
      if (route.exports) {
        for (const auto& [key, value] : params) {
          if (key == "format") format = value;
          if (key == "alternative" && (!absl::SimpleAtoi(value, &alternative) || alternative < 1)) {
            return SendError(res,
                             absl::InvalidArgumentError("alternative: must be an integer >= 1"));
          }
        }
      }
      absl::StatusOr<ExportFormat> export_format = ExportFormat::kSkyPilot;
      if (format != "json") {
        export_format = ParseExportFormat(format);
        if (!export_format.ok()) return SendError(res, export_format.status());
      }
      if (route.http_method == "POST") {
        for (const auto& [key, value] : params) {
          if ((key == "format" || key == "alternative") && route.exports) continue;
          return SendError(
              res, absl::InvalidArgumentError(absl::StrCat(
                       key, ": unknown parameter; send the request fields as the JSON body")));
        }
        if (absl::Status parsed = ParseJsonBody(req.body, request.get()); !parsed.ok()) {
          return SendError(res, parsed);
        }
      } else {
        if (absl::Status set = SetFieldsFromQuery(params, {}, request.get()); !set.ok()) {
          return SendError(res, set);
        }
      }
      std::unique_ptr<Message> response = NewMessage(route.method->output_type());
      const grpc::Status status = CallUnary(channel, path, timeout, *request, response.get());
      if (!status.ok()) return SendError(res, FromGrpcStatus(status));
      if (format == "json") return res.set_content(ToJson(*response), kJson);
      absl::StatusOr<ExportFile> exported =
          ExportAnswer(*export_format, static_cast<const v1::RecommendRequest&>(*request),
                       static_cast<const v1::RecommendResponse&>(*response), alternative);
      if (!exported.ok()) return SendError(res, exported.status());
      // What the file leaves out and how many files the answer has, also in
      // the file's header comment (docs/http.md).
      res.set_header("X-Export-Alternatives", std::to_string(exported->alternatives));
      if (!exported->left_out.empty()) {
        res.set_header("X-Export-Left-Out", ExportHeaderValue(exported->left_out));
      }
      res.set_content(exported->text, "application/yaml");
    };
    if (route.http_method == "POST") {
      server.Post(route.path, handler);
    } else {
      server.Get(route.path, handler);
    }
  }

  const std::string health_service = options.health_service;
  server.Get(kHealthPath, [channel, health_service](const httplib::Request&,
                                                    httplib::Response& res) {
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(health_service);
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
    res.status = serving ? 200 : 503;
    res.set_content(absl::StrCat("{\"status\":\"", state, "\"}"), kJson);
  });

  const std::unique_ptr<google::protobuf::DescriptorPool> documented =
      PoolFromDescriptorSet(GatewayDescriptorSet());
  const std::string openapi = OpenApiJson(routes, ExportFormatNames(), documented.get());
  server.Get(kOpenApiPath, [openapi](const httplib::Request&, httplib::Response& res) {
    res.set_content(openapi, kJson);
  });

  for (const WebAsset& asset : WebAssets()) {
    const std::string content(reinterpret_cast<const char*>(asset.data), asset.size);
    const std::string type = asset.content_type;
    auto serve = [content, type](const httplib::Request&, httplib::Response& res) {
      res.set_header("Cache-Control", "no-cache");
      res.set_content(content, type.c_str());
    };
    server.Get(asset.path, serve);
    if (std::string(asset.path) == "/index.html") server.Get("/", serve);
  }

  // Errors httplib produces itself (404, 413, 400) get the JSON error shape.
  server.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        absl::Status status;
        switch (res.status) {
          case 404:
            status = absl::NotFoundError("no such path");
            break;
          case 405:
            status = absl::UnimplementedError("method not allowed on this path");
            break;
          case 413:
            status = absl::ResourceExhaustedError("body: request body too large");
            break;
          default:
            status = absl::InvalidArgumentError(absl::StrCat("HTTP ", res.status));
            break;
        }
        const int http_status = res.status;
        res.set_content(ErrorJson(status), kJson);
        res.status = http_status;
        return httplib::Server::HandlerResponse::Handled;
      }));

  if (options.port == 0) {
    http->port_ = server.bind_to_any_port(options.host);
  } else {
    http->port_ = server.bind_to_port(options.host, options.port) ? options.port : -1;
  }
  if (http->port_ <= 0) {
    return absl::UnavailableError(
        absl::StrCat("http: cannot bind ", options.host, ":", options.port));
  }
  http->thread_ = std::thread([&server] { server.listen_after_bind(); });
  // stop() is a no-op until the loop runs, so wait for it: Stop() must work at once.
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return http;
}

void HttpServer::Stop() {
  if (server_ == nullptr) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

HttpServer::~HttpServer() { Stop(); }

}  // namespace gpuadvisor::gateway::http
