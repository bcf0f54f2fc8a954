#ifndef GPUADVISOR_SERVICES_SIZING_PRECISION_H_
#define GPUADVISOR_SERVICES_SIZING_PRECISION_H_

// Bytes per parameter and peak rates by numeric precision. Pure functions.

#include <string>

#include "gpuadvisor/sizing/v1/sizing.pb.h"

namespace gpuadvisor::sizing {

struct GpuSpec;

// Storage bytes per parameter: fp32 4, bf16/fp16 2, fp8/int8 1, int4 0.531
// (group-128 scale and zero point, AWQ/GPTQ), NF4 0.516 (QLoRA block 64 with
// double-quantized constants).
double WeightBytesPerParam(gpuadvisor::sizing::v1::Precision p);

// FP8, INT8, INT4 or NF4: formats whose loaders keep embeddings 16-bit.
bool IsQuantized(gpuadvisor::sizing::v1::Precision p);

// Achieved fraction of the 16-bit decode bandwidth efficiency for weight
// formats: weight-only int8/int4 kernels are dequantization-bound
// (EngineConstants.precision_bandwidth, data/sizing/engine.textproto); 1 for
// a precision without an entry.
double BandwidthEfficiencyRatio(gpuadvisor::sizing::v1::Precision p,
                                const gpuadvisor::sizing::v1::EngineConstants& k);

// Dense 16-bit peak (BF16, else FP16).
double Peak16(const GpuSpec& g);

// Dense peak FLOP/s the matmuls run at; sets `note` when the GPU lacks the
// precision (FP8 falls back to 16-bit, BF16 to FP16).
double PeakFlops(const GpuSpec& g, gpuadvisor::sizing::v1::Precision p, bool training,
                 std::string* note);
// The code of the note PeakFlops writes for `p` ("no_fp8" for FP8 work on a
// GPU without FP8, else "no_bf16").
const char* PeakNoteCode(gpuadvisor::sizing::v1::Precision p);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_PRECISION_H_
