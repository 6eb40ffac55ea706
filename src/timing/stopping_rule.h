// When a run of timed calls knows its mean well enough to stop (--timing adaptive): the 95%
// interval of the mean of all the calls so far within a target share of that mean, and the calls
// steady: the later half's mean within the same share of the earlier half's. A fixed count pays the
// noisiest kernel's price on every kernel; most kernels' means are known within 1% after twenty
// calls. The interval is Student's, over every call that counts, so a candidate that is fast on some
// calls and slow on others has a wide interval and runs to the maximum. The halves catch a drift the
// interval cannot: on the H100 the eager baseline of L2#56 ran 5.79, 5.71, 5.57 ms over its first
// thirty calls and settled near 5.4 ms after sixty, an interval within 1% at twenty calls and a
// figure 4% from the one of all its calls. What the times cannot show, a GPU still throttled by
// earlier work, the SM clocks do: check::ends_run asks for both.
#pragma once

#include <vector>

namespace kbench::timing {

// The 97.5% quantile of Student's t with `degrees` degrees of freedom (two-sided 95%).
double t_quantile_975(int degrees);

// The half-width of the 95% interval of the mean of `samples`, as a share of the mean; infinite
// for fewer than two samples or a mean of zero.
double relative_half_width(const std::vector<double>& samples);

// How far the later half's mean is from the earlier half's, as a share of the earlier (0.02: 2%);
// infinite for fewer than two samples or a mean of zero. An odd count's middle sample is in neither.
double relative_drift(const std::vector<double>& samples);

// Whether `samples` know their mean within `target` (e.g. 0.01: within ±1%) and have not drifted
// by more than `target` between their halves.
bool precise_enough(const std::vector<double>& samples, double target);

}  // namespace kbench::timing
