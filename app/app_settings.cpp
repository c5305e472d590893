// The app's one settings file (see app_settings.h).
#include "app_settings.h"

namespace slipway::app {

QSettings app_settings() {
    return QSettings(QSettings::IniFormat, QSettings::UserScope, QStringLiteral("slipway"),
                     QStringLiteral("slipway"));
}

}  // namespace slipway::app
