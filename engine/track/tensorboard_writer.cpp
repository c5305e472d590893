// Event files on disk: naming, the first (file_version) record, and append-and-flush per record.
#include "track/tensorboard_writer.h"

#include <unistd.h>

#include <atomic>
#include <cmath>

namespace slipway::track {
namespace {

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
    return name;
}

}  // namespace

Result<std::unique_ptr<TensorBoardWriter>> TensorBoardWriter::open(const std::string& dir, double wall_time,
                                                                   FileSystem& fs) {
    if (Status made = fs.create_dirs(dir); !made.ok())
        return Status::Error("cannot create the TensorBoard folder " + dir + ": " + made.message());
    static std::atomic<int> files_opened{0};
    const std::string path = dir + "/events.out.tfevents." + std::to_string(static_cast<int64_t>(wall_time)) +
                             "." + host_name() + "." + std::to_string(getpid()) + "." +
                             std::to_string(files_opened++);
    Result<std::unique_ptr<WritableFile>> file = fs.create_file(path, 0644);
    if (!file.ok()) return Status::Error("cannot create " + path + ": " + file.error());
    std::unique_ptr<TensorBoardWriter> writer(new TensorBoardWriter(path, std::move(*file)));
    if (Status first = writer->append(file_version_event(wall_time)); !first.ok()) return first;
    return writer;
}

Status TensorBoardWriter::append(std::string_view event) {
    if (file_ == nullptr) return Status::Error(path_ + " is closed");
    Status written = file_->append(tfrecord(event));
    if (written.ok()) written = file_->flush();
    return written;  // its message names the file
}

Status TensorBoardWriter::scalar(std::string_view tag, int64_t step, double value, double wall_time) {
    return append(scalar_event(wall_time, step, tag, static_cast<float>(value)));
}

Status TensorBoardWriter::text(std::string_view tag, int64_t step, std::string_view text, double wall_time) {
    return append(text_event(wall_time, step, tag, text));
}

Status TensorBoardWriter::hparams(const HParams& hparams, const std::vector<std::string>& metric_tags,
                                  double wall_time) {
    if (Status s = append(hparams_experiment_event(wall_time, hparams, metric_tags)); !s.ok()) return s;
    return append(hparams_session_start_event(wall_time, hparams));
}

Status TensorBoardWriter::session_end(bool succeeded, double wall_time) {
    return append(hparams_session_end_event(wall_time, succeeded));
}

Status TensorBoardWriter::close() {
    if (file_ == nullptr) return Status::Ok();
    const Status closed = file_->close();
    file_.reset();
    if (!closed.ok()) return Status::Error("cannot close " + path_ + ": " + closed.message());
    return Status::Ok();
}

}  // namespace slipway::track
