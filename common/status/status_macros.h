#ifndef GPUADVISOR_COMMON_STATUS_STATUS_MACROS_H_
#define GPUADVISOR_COMMON_STATUS_STATUS_MACROS_H_

// Debian's Abseil (20220623) has no RETURN_IF_ERROR / ASSIGN_OR_RETURN, so we
// keep these few lines ourselves.

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GPUADVISOR_CONCAT_INNER_(a, b) a##b
#define GPUADVISOR_CONCAT_(a, b) GPUADVISOR_CONCAT_INNER_(a, b)

// Returns from the current function if `expr` is not OK.
#define RETURN_IF_ERROR(expr)            \
  do {                                   \
    const absl::Status _status = (expr); \
    if (!_status.ok()) return _status;   \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, StatusOrExpr())`: unwraps or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(GPUADVISOR_CONCAT_(_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                           \
  if (!statusor.ok()) return statusor.status();     \
  lhs = std::move(statusor).value()

#endif  // GPUADVISOR_COMMON_STATUS_STATUS_MACROS_H_
