// `slipway --screenshot DIR`: the main window with the demo run in the editor and the three fixture
// MLPerf logs overlaid in the monitor, one PNG per main page (and per editor page) written into DIR.
// Works under QT_QPA_PLATFORM=offscreen; tests and docs use it.
#pragma once

#include <QString>
#include <QStringList>

#include "contract/status.h"

namespace slipway::app {

class MainWindow;

// Fills `window` with the demo content, grabs every page and returns the written files in order.
Result<QStringList> take_screenshots(MainWindow& window, const QString& dir);

}  // namespace slipway::app
