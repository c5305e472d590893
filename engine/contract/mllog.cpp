// MLLOG line writer (Python json.dumps byte-for-byte) and parser (never throws, any bytes).
#include "contract/mllog.h"

#include "contract/json_text.h"
#include "contract/mllog_keys.h"
#include "contract/mllog_scan.h"
#include "contract/utf8.h"

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

namespace slipway {
namespace {

// Python's float repr: the shortest digits that round-trip, positional when -4 <= exponent <= 15,
// otherwise d.ddde[+-]XX. nlohmann switches to exponents one decade earlier (1e+15), hence our own.
void append_python_float(double v, std::string& out) {
    if (!std::isfinite(v)) {
        out += "null";
        return;
    }
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
    std::string_view s(buf, static_cast<size_t>(res.ptr - buf));  // e.g. "-9.3790096e-01", "0e+00"
    if (!s.empty() && s.front() == '-') {
        out += '-';
        s.remove_prefix(1);
    }
    const size_t e = s.find('e');
    std::string digits(1, s[0]);
    if (e > 1) digits.append(s.substr(2, e - 2));
    const std::string_view exp_text = s.substr(e + 1);
    int exponent = 0;
    std::from_chars(exp_text.data() + 1, exp_text.data() + exp_text.size(), exponent);
    if (exp_text[0] == '-') exponent = -exponent;

    const int ndigits = static_cast<int>(digits.size());
    if (exponent >= -4 && exponent <= 15) {
        const int point = exponent + 1;  // digits before the decimal point
        if (point <= 0) {
            out += "0.";
            out.append(static_cast<size_t>(-point), '0');
            out += digits;
        } else if (point >= ndigits) {
            out += digits;
            out.append(static_cast<size_t>(point - ndigits), '0');
            out += ".0";
        } else {
            out.append(digits, 0, static_cast<size_t>(point));
            out += '.';
            out.append(digits, static_cast<size_t>(point), std::string::npos);
        }
        return;
    }
    out += digits[0];
    if (ndigits > 1) {
        out += '.';
        out.append(digits, 1, std::string::npos);
    }
    out += exponent < 0 ? "e-" : "e+";
    const int magnitude = std::abs(exponent);
    if (magnitude < 10) out += '0';
    out += std::to_string(magnitude);
}

void append_python_string(const std::string& s, std::string& out) {
    // nlohmann with ensure_ascii escapes exactly what Python does (controls, '"', '\\', >= 0x7F, lowercase
    // hex, surrogate pairs); `replace` turns invalid UTF-8 into U+FFFD instead of throwing.
    out += MllogJson(s).dump(-1, ' ', true, MllogJson::error_handler_t::replace);
}

void append_python_json(const MllogJson& j, std::string& out) {
    switch (j.type()) {
        case MllogJson::value_t::object: {
            out += '{';
            bool first = true;
            for (const auto& item : j.items()) {
                if (!first) out += ", ";
                first = false;
                append_python_string(item.key(), out);
                out += ": ";
                append_python_json(item.value(), out);
            }
            out += '}';
            return;
        }
        case MllogJson::value_t::array: {
            out += '[';
            bool first = true;
            for (const auto& element : j) {
                if (!first) out += ", ";
                first = false;
                append_python_json(element, out);
            }
            out += ']';
            return;
        }
        case MllogJson::value_t::number_float:
            append_python_float(j.get<double>(), out);
            return;
        case MllogJson::value_t::string:
            append_python_string(j.get_ref<const std::string&>(), out);
            return;
        default:  // null, booleans, integers: nlohmann and Python agree
            out += j.dump(-1, ' ', true, MllogJson::error_handler_t::replace);
            return;
    }
}

// Parser messages quote the offending bytes; keep them valid UTF-8 so the message can itself be
// written as JSON later (nlohmann throws on invalid UTF-8 when dumping).
std::string sanitize_utf8(std::string_view in) {
    std::string out;
    out.reserve(in.size());
    for (size_t i = 0; i < in.size();) {
        const size_t length = utf8_sequence_at(in, i);
        if (length > 0) {
            out.append(in.substr(i, length));
            i += length;
        } else {
            out += "\xEF\xBF\xBD";  // U+FFFD
            ++i;
        }
    }
    return out;
}

std::string string_field(const MllogJson& doc, const char* name) {
    const auto it = doc.find(name);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t time_field(const MllogJson& doc) {
    const auto it = doc.find("time_ms");
    return it == doc.end() ? 0 : mllog_detail::time_ms_from_json(*it);
}

// The payload (text after the marker) through nlohmann: the reference path, and the fallback for whatever
// the scanner declines.
void parse_payload_with_nlohmann(std::string_view text, MllogParseResult& result) {
    result.kind = MllogLineKind::kBadMllog;
    if (json_nesting_exceeds(text)) {
        result.error = "MLLOG payload nests deeper than " + std::to_string(kMaxJsonNesting) + " levels";
        return;
    }
    MllogJson doc;
    try {
        doc = MllogJson::parse(text.begin(), text.end());
    } catch (const std::exception& e) {  // parse_error, and bad_alloc on absurd input: still just a bad line
        result.error = sanitize_utf8(e.what());
        return;
    }
    if (!doc.is_object()) {
        result.error = std::string("MLLOG payload is a JSON ") + doc.type_name() + ", not an object";
        return;
    }

    result.kind = MllogLineKind::kEvent;
    MllogEvent& event = result.event;
    event.ns = string_field(doc, "namespace");
    event.time_ms = time_field(doc);
    event.event_type = string_field(doc, "event_type");
    event.key = string_field(doc, "key");
    // Moved, not copied: a copy of a deeply nested value would recurse.
    if (auto it = doc.find("value"); it != doc.end()) event.value = std::move(*it);
    if (auto it = doc.find("metadata"); it != doc.end()) event.metadata = std::move(*it);
}

}  // namespace

std::optional<double> MllogEvent::metadata_number(std::string_view name) const {
    if (!metadata.is_object()) return std::nullopt;
    const auto it = metadata.find(std::string(name));
    if (it == metadata.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
}

std::optional<std::string> MllogEvent::metadata_string(std::string_view name) const {
    if (!metadata.is_object()) return std::nullopt;
    const auto it = metadata.find(std::string(name));
    if (it == metadata.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

std::optional<std::string> eval_task_series(const MllogEvent& event) {
    if (event.key != mllog_key::kEvalTask || !event.value.is_number()) return std::nullopt;
    const std::optional<std::string> task = event.metadata_string(mllog_field::kTask);
    const std::optional<std::string> metric = event.metadata_string(mllog_field::kMetric);
    if (!task || !metric || task->empty() || metric->empty()) return std::nullopt;
    return *task + "/" + *metric;
}

std::string format_python_json(const MllogJson& value) {
    std::string out;
    append_python_json(value, out);
    return out;
}

std::string format_mllog_line(const MllogEvent& event) {
    std::string out(kMllogPrefix);
    out += "{\"namespace\": ";
    append_python_string(event.ns, out);
    out += ", \"time_ms\": ";
    out += std::to_string(event.time_ms);
    out += ", \"event_type\": ";
    append_python_string(event.event_type, out);
    out += ", \"key\": ";
    append_python_string(event.key, out);
    out += ", \"value\": ";
    append_python_json(event.value, out);
    out += ", \"metadata\": ";
    append_python_json(event.metadata, out);
    out += '}';
    return out;
}

MllogParseResult parse_mllog_line(std::string_view line) {
    MllogParseResult result;
    const size_t pos = line.find(kMllogPrefix);
    if (pos == std::string_view::npos) return result;
    const std::string_view payload = line.substr(pos + kMllogPrefix.size());
    // The scanner takes the lines real loggers write at several times nlohmann's speed; the rest (errors
    // included, so their messages stay nlohmann's) goes through nlohmann.
    if (mllog_detail::scan_mllog_payload(payload, result.event)) {
        result.kind = MllogLineKind::kEvent;
        return result;
    }
    result.event = MllogEvent();
    parse_payload_with_nlohmann(payload, result);
    return result;
}

namespace mllog_detail {

MllogParseResult parse_mllog_line_reference(std::string_view line) {
    MllogParseResult result;
    const size_t pos = line.find(kMllogPrefix);
    if (pos == std::string_view::npos) return result;
    parse_payload_with_nlohmann(line.substr(pos + kMllogPrefix.size()), result);
    return result;
}

}  // namespace mllog_detail

MllogWriter::MllogWriter(std::ostream& out, Clock clock) : clock_(std::move(clock)), streams_{&out} {}

void MllogWriter::add_stream(std::ostream& out) {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.push_back(&out);
}

void MllogWriter::add_listener(std::function<void(const MllogEvent&)> listener) {
    std::lock_guard<std::mutex> lock(mutex_);
    listeners_.push_back(std::move(listener));
}

Status MllogWriter::tee_to_file(const std::string& path, FileSystem& fs) {
    Result<std::unique_ptr<WritableFile>> file = fs.open_for_append(path, 0666);
    if (!file.ok()) return Status::Error("cannot open the MLLOG file for appending: " + file.error());
    // A copy cut short mid-line (a full disk, a crash) must not glue its torn line onto our first one.
    if (std::ifstream before(path, std::ios::binary | std::ios::ate); before && before.tellg() > 0) {
        before.seekg(-1, std::ios::end);
        if (before.get() != '\n') {
            Status s = (*file)->append("\n");
            if (s.ok()) s = (*file)->flush();
            if (!s.ok()) return Status::Error("cannot append to the MLLOG file: " + s.message());
        }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    files_.push_back(TeeFile{path, std::move(*file)});
    return Status::Ok();
}

Status MllogWriter::file_status() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return file_status_;
}

Status MllogWriter::close_files() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (TeeFile& tee : files_) {
        if (tee.file == nullptr) continue;
        const Status closed = tee.file->close();
        tee.file.reset();
        if (!closed.ok() && file_status_.ok())
            file_status_ = Status::Error("the MLLOG copy may have lost its last lines: " + closed.message());
    }
    return file_status_;
}

void MllogWriter::point_in_time(std::string_view key, MllogJson value, MllogJson metadata, const char* file,
                                int line) {
    log(kPointInTime, key, std::move(value), std::move(metadata), file, line);
}

void MllogWriter::interval_start(std::string_view key, MllogJson value, MllogJson metadata, const char* file,
                                 int line) {
    log(kIntervalStart, key, std::move(value), std::move(metadata), file, line);
}

void MllogWriter::interval_end(std::string_view key, MllogJson value, MllogJson metadata, const char* file,
                               int line) {
    log(kIntervalEnd, key, std::move(value), std::move(metadata), file, line);
}

void MllogWriter::log(std::string_view event_type, std::string_view key, MllogJson value, MllogJson metadata,
                      const char* file, int line) {
    MllogEvent event;
    event.ns = ns_;
    event.time_ms = clock_();
    event.event_type = std::string(event_type);
    event.key = std::string(key);
    event.value = std::move(value);
    // As mlcommons does: call site first, then the caller's keys (which override file/lineno in place);
    // metadata that is not an object is ignored.
    event.metadata = MllogJson::object();
    event.metadata["file"] = file ? file : "";
    event.metadata["lineno"] = line;
    if (metadata.is_object()) {
        for (auto& item : metadata.items())
            event.metadata[item.key()] = std::move(item.value());
    }
    write(event);
}

void MllogWriter::write(const MllogEvent& event) {
    std::string text = format_mllog_line(event);
    text += '\n';
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::ostream* stream : streams_) {
        stream->write(text.data(), static_cast<std::streamsize>(text.size()));
        stream->flush();
    }
    for (TeeFile& tee : files_) {
        if (tee.file == nullptr) continue;
        Status s = tee.file->append(text);
        if (s.ok()) s = tee.file->flush();
        if (s.ok()) continue;
        // No more lines go to a file after a failed append (it may end in part of a line); the error
        // names the first line missing from it (the other streams have it and every line after it).
        tee.file.reset();
        if (file_status_.ok()) {
            file_status_ = Status::Error(s.message() + "; the MLLOG copy stops before the '" + event.key +
                                         "' line at " + std::to_string(event.time_ms) +
                                         " ms (the log on standard output has every line)");
        }
    }
    for (const auto& listener : listeners_)
        listener(event);
}

int64_t MllogWriter::system_clock_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace slipway
