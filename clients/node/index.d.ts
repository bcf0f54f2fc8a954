// Types of gpu-advisor-client. The message types are declarations generated
// from the .proto files at install (scripts/prepare.js -> types/); inputs are
// the permissive `X`, answers the filled-in `X__Output`.
import type * as grpc from '@grpc/grpc-js';
import type { RecommendRequest } from './types/gpuadvisor/gateway/v1/RecommendRequest';
import type { RecommendResponse__Output } from './types/gpuadvisor/gateway/v1/RecommendResponse';
import type { EstimateRequest } from './types/gpuadvisor/gateway/v1/EstimateRequest';
import type { EstimateResponse__Output } from './types/gpuadvisor/gateway/v1/EstimateResponse';
import type { ListOffersRequest } from './types/gpuadvisor/catalog/v1/ListOffersRequest';
import type { ListOffersResponse__Output } from './types/gpuadvisor/catalog/v1/ListOffersResponse';
import type { ListGpusResponse__Output } from './types/gpuadvisor/catalog/v1/ListGpusResponse';
import type { ListModelsResponse__Output } from './types/gpuadvisor/sizing/v1/ListModelsResponse';

export type { RecommendRequest, RecommendResponse__Output as RecommendResponse };
export type { EstimateRequest, EstimateResponse__Output as EstimateResponse };
export type { ListOffersRequest, ListOffersResponse__Output as ListOffersResponse };
export type { ListGpusResponse__Output as ListGpusResponse, ListModelsResponse__Output as ListModelsResponse };
export type { Recommendation__Output as Recommendation } from './types/gpuadvisor/gateway/v1/Recommendation';
export type { Workload } from './types/gpuadvisor/sizing/v1/Workload';
export type { Constraints } from './types/gpuadvisor/gateway/v1/Constraints';

export declare class GatewayError extends Error {
  /** gRPC status code number (grpc.status). */
  code: number;
  /** Its name, e.g. "INVALID_ARGUMENT". */
  status: string;
  details: string;
  /** The request field the message names ("workload.model.params"), or null. */
  field: string | null;
}

export interface GatewayClientOptions {
  /** Deadline of each call in milliseconds (default 10000). */
  timeoutMs?: number;
  credentials?: grpc.ChannelCredentials;
  /** PEM file of the CA that signed the gateway's certificate (TLS). */
  ca?: string;
  /** PEM client certificate and its key, for gateways that ask for one (mTLS). */
  cert?: string;
  key?: string;
}

export declare class GatewayClient {
  constructor(target?: string, options?: GatewayClientOptions);
  waitReady(timeoutMs?: number): Promise<void>;
  recommend(request: RecommendRequest): Promise<RecommendResponse__Output>;
  estimate(request: EstimateRequest): Promise<EstimateResponse__Output>;
  offers(request?: ListOffersRequest): Promise<ListOffersResponse__Output>;
  gpus(): Promise<ListGpusResponse__Output>;
  models(): Promise<ListModelsResponse__Output>;
  close(): void;
}

export declare const LOADER_OPTIONS: {
  keepCase: true; longs: StringConstructor; enums: StringConstructor; defaults: true; oneofs: true;
};
export declare function protoDir(): string;
/** Throws GatewayError (INVALID_ARGUMENT, `field` = the key's path) for a key of
 *  `request` that is not a field of the GatewayService method's request message. */
export declare function checkRequest(method: 'Recommend' | 'Estimate' | 'ListOffers' | 'ListGpus' | 'ListModels', request: object): void;
/** TLS channel credentials from PEM file paths (see GatewayClientOptions). */
export declare function tlsCredentials(files?: {ca?: string; cert?: string; key?: string}): grpc.ChannelCredentials;
