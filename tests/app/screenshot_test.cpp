// `slipway --screenshot DIR` in-process (offscreen): a PNG of every page is written, each a full window.
#include "screenshot.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <QFileInfo>
#include <QImage>
#include <QTemporaryDir>

#include "main_window.h"
#include "monitor/monitor_widget.h"
#include "test_util.h"

namespace slipway::app {
namespace {

TEST(Screenshot, WritesAPngOfEveryPage) {
    testing_util::IsolatedHome home;
    QTemporaryDir dir;
    MainWindow window(home.path() + "/history.sqlite");
    const Result<QStringList> written = take_screenshots(window, dir.path());
    ASSERT_TRUE(written.ok()) << written.error();
    QStringList names;
    for (const QString& path : *written) {
        names << QFileInfo(path).fileName();
        const QImage image(path);
        EXPECT_EQ(image.width(), 1400) << path.toStdString();
        EXPECT_EQ(image.height(), 900) << path.toStdString();
    }
    QStringList expected = {
        "01-runs.png",
        "02-editor-model-data.png",
        "03-editor-hyperparameters.png",
        "04-editor-adapter.png",
        "05-editor-resources.png",
        "06-editor-container.png",
        "07-editor-preview.png",
        "08-editor-preview-sbatch.png",
        "09-editor-container-lint.png",
        "10-editor-invalid.png",
        "11-editor-presets.png",
        "12-editor-model.png",
        "13-editor-data-preview.png",
        "14-monitor.png",
        "15-clusters.png",
    };
    // With a demo run's log in build/demo-run (packaging/demo.sh), one more picture: the engine's own run.
    if (QFileInfo::exists(test_paths::source_dir("/build/demo-run/mllog.txt"))) {
        expected.last() = "15-monitor-engine-run.png";
        expected << "16-clusters.png";
    }
    EXPECT_EQ(names, expected);
    // The monitor held the three fixture logs when it was grabbed.
    EXPECT_GE(window.monitor()->run_keys().size(), 3u);
}

}  // namespace
}  // namespace slipway::app
