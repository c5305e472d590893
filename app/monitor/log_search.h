// Search in a whole log file, for the monitor's raw log view, which keeps only the last lines of a long
// log: finds a line containing the text (ASCII case-insensitive, like the view's own search) anywhere in
// the file and returns the lines around it, so the view can show that window. Plain file reading with no
// widgets; meant to run on a worker thread.
#pragma once

#include <QString>
#include <QStringList>

#include <cstdint>

#include "contract/status.h"

namespace slipway::app {

struct LogSearchRequest {
    QString path;
    QString text;
    // The search starts after this line going forward (-1: from the first line) or before it going
    // backward (-1: from the last line), and wraps around the file once.
    int64_t from_line = -1;
    bool backward = false;
    int context_lines = 1000;  // lines kept on each side of the hit
};

struct LogSearchHit {
    bool found = false;
    int64_t line = -1;       // 0-based line of the hit in the file
    int64_t first_line = 0;  // the file line that `window` starts at
    QStringList window;      // the hit's line with up to context_lines lines on each side
};

Result<LogSearchHit> search_log_file(const LogSearchRequest& request);

}  // namespace slipway::app
