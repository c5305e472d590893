// search_log_file: two passes at most (the hit, then the lines around it), each streaming the file.
#include "monitor/log_search.h"

#include <QFile>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace slipway::app {
namespace {

char lower(char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool contains_folded(std::string_view line, std::string_view folded_needle) {
    const auto it = std::search(line.begin(), line.end(), folded_needle.begin(), folded_needle.end(),
                                [](char a, char b) { return lower(a) == b; });
    return it != line.end();
}

std::string_view without_newline(const QByteArray& bytes) {
    std::string_view line(bytes.constData(), static_cast<size_t>(bytes.size()));
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
        line.remove_suffix(1);
    return line;
}

}  // namespace

Result<LogSearchHit> search_log_file(const LogSearchRequest& request) {
    std::string needle = request.text.toStdString();
    if (needle.empty()) return LogSearchHit{};
    std::transform(needle.begin(), needle.end(), needle.begin(), lower);

    QFile file(request.path);
    if (!file.open(QIODevice::ReadOnly))
        return Status::Error("cannot read " + request.path.toStdString() + ": " +
                             file.errorString().toStdString());
    // First pass: the first hit after from_line (forward), the last before it (backward), and the
    // first / last hit overall for wrapping.
    int64_t first_any = -1, last_any = -1, wanted = -1, last_before = -1;
    for (int64_t n = 0; !file.atEnd(); ++n) {
        if (!contains_folded(without_newline(file.readLine()), needle)) continue;
        if (first_any < 0) first_any = n;
        last_any = n;
        if (!request.backward && wanted < 0 && n > request.from_line) wanted = n;
        if (request.backward && (request.from_line < 0 || n < request.from_line)) last_before = n;
    }
    const int64_t hit =
        request.backward ? (last_before >= 0 ? last_before : last_any) : (wanted >= 0 ? wanted : first_any);
    LogSearchHit result;
    if (hit < 0) return result;
    result.found = true;
    result.line = hit;
    result.first_line = std::max<int64_t>(0, hit - request.context_lines);
    // Second pass: the window around the hit.
    file.seek(0);
    for (int64_t n = 0; !file.atEnd() && n <= hit + request.context_lines; ++n) {
        const QByteArray bytes = file.readLine();
        if (n >= result.first_line) result.window << QString::fromUtf8(without_newline(bytes));
    }
    return result;
}

}  // namespace slipway::app
