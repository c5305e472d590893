// The app's one settings file, ~/.config/slipway/slipway.ini ($XDG_CONFIG_HOME respected): the window,
// the monitor, recent configs and the interface language all live there.
#pragma once

#include <QSettings>

namespace slipway::app {

QSettings app_settings();

}  // namespace slipway::app
