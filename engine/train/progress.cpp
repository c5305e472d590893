// progress_line (progress.h).
#include "train/progress.h"

#include <iomanip>
#include <sstream>

namespace slipway::train {

std::string duration_text(double seconds) {
    const auto s = static_cast<int64_t>(seconds + 0.5);
    std::ostringstream out;
    out << s / 3600 << ":" << std::setw(2) << std::setfill('0') << (s / 60) % 60 << ":" << std::setw(2)
        << s % 60;
    return out.str();
}

std::string progress_line(const ProgressFigures& f) {
    std::ostringstream line;
    const double eta =
        f.step > 0 ? f.elapsed_s / static_cast<double>(f.step) * static_cast<double>(f.total_steps - f.step)
                   : 0;
    line << "step " << f.step << "/" << f.total_steps << " | loss " << std::fixed << std::setprecision(4)
         << f.loss << " | lr " << std::scientific << std::setprecision(2) << f.lr << std::fixed << " | grad "
         << std::setprecision(2) << f.grad_norm << " | " << std::setprecision(0) << f.tokens_per_second
         << " tok/s | " << duration_text(f.elapsed_s) << " elapsed, ETA " << duration_text(eta) << "\n";
    return line.str();
}

}  // namespace slipway::train
