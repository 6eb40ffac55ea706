// When a run of timed calls knows its mean well enough to stop (--timing adaptive): the 95%
// interval of the mean of all the calls so far within a target share of that mean. A fixed count
// pays the noisiest kernel's price on every kernel; most kernels' means are known within 1% after
// twenty calls. The interval is Student's, over every call that counts, so a candidate that is fast
// on some calls and slow on others has a wide interval and runs to the maximum.
#pragma once

#include <vector>

namespace kbench::timing {

// The 97.5% quantile of Student's t with `degrees` degrees of freedom (two-sided 95%).
double t_quantile_975(int degrees);

// The half-width of the 95% interval of the mean of `samples`, as a share of the mean; infinite
// for fewer than two samples or a mean of zero.
double relative_half_width(const std::vector<double>& samples);

// Whether `samples` know their mean within `target` (e.g. 0.01: within ±1%).
bool precise_enough(const std::vector<double>& samples, double target);

}  // namespace kbench::timing
