#ifndef GPUADVISOR_SERVICES_SIZING_INTERVALS_H_
#define GPUADVISOR_SERVICES_SIZING_INTERVALS_H_

// P10-P90 intervals of an estimate's hours, tokens/s and time to first token
// from the measured error of that quantity and framework class
// (data/sizing/error_intervals.textproto, written by sizing_calibration_test
// from the published calibration rows; docs/sizing.md "Intervals").

#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/sizing/job.h"

namespace gpuadvisor::sizing {

// Sets out->estimated_hours_interval, tokens_per_second_interval and
// time_to_first_token_interval for a fitting configuration whose numbers are
// estimates (an endpoint's hours are its input and get none). Leaves them
// unset when the data has no error for the quantity.
void FillIntervals(const Job& job, gpuadvisor::sizing::v1::ConfigurationEstimate* out);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_INTERVALS_H_
