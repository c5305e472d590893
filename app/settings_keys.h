// The keys of the app's settings file (app_settings.h), in one place: each names what it keeps, and the code
// that restores a value and the code that saves it read the same constant.
#pragma once

#include <QLatin1String>
#include <QString>

#include <string>

namespace slipway::app::settings_keys {

inline constexpr QLatin1String kWindowGeometry{"window/geometry"};
inline constexpr QLatin1String kWindowState{"window/state"};
inline constexpr QLatin1String kWindowPage{"window/page"};  // the page shown last (MainWindow::Page)
inline constexpr QLatin1String kMonitorSmoothing{"monitor/smoothing"};
inline constexpr QLatin1String kMonitorXAxis{"monitor/x_axis"};
inline constexpr QLatin1String kMonitorLogScale{"monitor/log_scale"};
inline constexpr QLatin1String kStallFactor{
    "monitor/stall_factor"};  // a run stalls after this x its step time
inline constexpr QLatin1String kStallMinSeconds{"monitor/stall_min_s"};
inline constexpr QLatin1String kRecentConfigs{"recent/configs"};
inline constexpr QLatin1String kUiLanguage{"ui/language"};  // "", "en" or "ru"; applied at the next start

// The image a cluster's first-run guide used last.
inline QString cluster_image(const std::string& cluster) {
    return QStringLiteral("clusters/%1/image").arg(QString::fromStdString(cluster));
}

}  // namespace slipway::app::settings_keys
