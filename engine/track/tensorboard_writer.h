// One TensorBoard event file in a run's log folder, written as the run goes: every record is appended whole
// and flushed, so TensorBoard follows a live run and a crash leaves at most a torn last record, which its
// reader skips.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "contract/file_system.h"
#include "contract/status.h"
#include "track/tensorboard_events.h"

namespace slipway::track {

class TensorBoardWriter {
public:
    // Creates `dir` and a new file in it, named as SummaryWriter names one:
    // events.out.tfevents.<unix seconds>.<host>.<pid>.<n>.
    [[nodiscard]] static Result<std::unique_ptr<TensorBoardWriter>> open(
        const std::string& dir, double wall_time, FileSystem& fs = default_file_system());

    [[nodiscard]] Status scalar(std::string_view tag, int64_t step, double value, double wall_time);
    [[nodiscard]] Status text(std::string_view tag, int64_t step, std::string_view text, double wall_time);
    // The HParams plugin's experiment and session start; metric_tags are the scalars shown beside them.
    [[nodiscard]] Status hparams(const HParams& hparams, const std::vector<std::string>& metric_tags,
                                 double wall_time);
    [[nodiscard]] Status session_end(bool succeeded, double wall_time);
    [[nodiscard]] Status close();

    const std::string& path() const { return path_; }

private:
    TensorBoardWriter(std::string path, std::unique_ptr<WritableFile> file)
        : path_(std::move(path)), file_(std::move(file)) {}
    [[nodiscard]] Status append(std::string_view event);

    std::string path_;
    std::unique_ptr<WritableFile> file_;
};

}  // namespace slipway::track
