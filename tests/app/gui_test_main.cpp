// Test main of gui_tests: without a display, Qt must use the offscreen platform, and that has to be set
// before QApplication exists (gtest_discover_tests runs this binary at build time, usually headless). The
// widgets speak English, as the app does with --lang en.
#include <gtest/gtest.h>

#include <QApplication>
#include <QtGlobal>

#include "i18n/ui_language.h"

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    ::testing::InitGoogleTest(&argc, argv);
    QApplication app(argc, argv);
    // As the app does at start: English needs its translation too, for the plural forms ("1 node").
    slipway::app::install_translators(app, QStringLiteral("en"));
    return RUN_ALL_TESTS();
}
