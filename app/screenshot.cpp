// The screenshot mode: demo content, then one grab per page.
#include "screenshot.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QListWidget>
#include <QPainter>
#include <QPixmap>
#include <QScrollArea>
#include <QTabWidget>

#include "core/install_paths.h"
#include "editor/container_panel.h"
#include "editor/data_preview_panel.h"
#include "editor/model_picker.h"
#include "editor/preset_gallery.h"
#include "editor/run_editor.h"
#include "main_window.h"
#include "monitor/monitor_widget.h"
#include "runs/run_tracker.h"

namespace slipway::app {
namespace {

void settle(int ms = 150) {
    QElapsedTimer t;
    t.start();
    do {
        QApplication::processEvents(QEventLoop::AllEvents, 20);
    } while (t.elapsed() < ms);
}

}  // namespace

Result<QStringList> take_screenshots(MainWindow& window, const QString& dir) {
    if (!QDir().mkpath(dir)) return Result<QStringList>::Error("cannot create " + dir.toStdString());
    const QString root = QString::fromStdString(resource_root());
    if (root.isEmpty())
        return Result<QStringList>::Error("resources/presets not found: cannot load the demo run");
    if (const Status s =
            window.editor()->load_file(root + QStringLiteral("/resources/presets/demo-tiny.json"));
        !s.ok()) {
        return s;
    }
    // The fixture logs live in the source tree's tests/data; an installed package has none.
    const QString logs = root + QStringLiteral("/tests/data/mlperf-logs");
    int pending = 0;
    // Counts opened logs read to their end; disconnected on every return (`pending` is on this stack).
    struct ScopedConnection {
        QMetaObject::Connection connection;
        ~ScopedConnection() { QObject::disconnect(connection); }
    } counting{QObject::connect(window.tracker(), &RunTracker::loaded, [&pending] { --pending; })};
    for (const char* name :
         {"dell-xe9680-result_0.txt", "fujitsu-gx2560m7-result_0.txt", "juniper-h100n1-result_0.txt"}) {
        if (window.open_log(logs + QLatin1Char('/') + QLatin1String(name)).ok()) ++pending;
    }
    QElapsedTimer wait;
    wait.start();
    while (pending > 0 && wait.elapsed() < 30'000)
        QApplication::processEvents(QEventLoop::AllEvents, 50);
    window.monitor()->set_smoothing(0.6);

    window.resize(1400, 900);
    window.show();
    settle(300);

    QStringList written;
    int index = 1;
    // `dialog`, when given, is drawn centred over the window, where it opens.
    auto grab = [&](const QString& name, QWidget* dialog = nullptr) -> Status {
        settle();
        const QString path =
            QDir(dir).filePath(QStringLiteral("%1-%2.png").arg(index++, 2, 10, QLatin1Char('0')).arg(name));
        QPixmap shot = window.grab();
        if (dialog != nullptr) {
            const QRect where((shot.width() - dialog->width()) / 2, (shot.height() - dialog->height()) / 2,
                              dialog->width(), dialog->height());
            QPainter painter(&shot);
            painter.drawPixmap(where.topLeft(), dialog->grab());
            painter.setPen(QColor(0x75, 0x75, 0x75));  // the frame a window manager would draw
            painter.drawRect(where.adjusted(-1, -1, 0, 0));
        }
        if (!shot.save(path, "PNG")) return Status::Error("cannot write " + path.toStdString());
        written << path;
        return Status::Ok();
    };
    window.show_page(MainWindow::kRunsPage);
    if (Status s = grab(QStringLiteral("runs")); !s.ok()) return s;
    window.show_page(MainWindow::kEditorPage);
    const QStringList pages = {QStringLiteral("editor-model-data"), QStringLiteral("editor-hyperparameters"),
                               QStringLiteral("editor-adapter"),    QStringLiteral("editor-resources"),
                               QStringLiteral("editor-container"),  QStringLiteral("editor-preview")};
    for (int i = 0; i < pages.size(); ++i) {
        window.editor()->pages()->setCurrentIndex(i);
        if (Status s = grab(pages[i]); !s.ok()) return s;
    }
    // The Preview page's second tab: the sbatch script.
    if (auto* preview = qobject_cast<QTabWidget*>(window.editor()->pages()->widget(RunEditor::kPreview))) {
        preview->setCurrentIndex(1);
        if (Status s = grab(QStringLiteral("editor-preview-sbatch")); !s.ok()) return s;
        preview->setCurrentIndex(0);
    }
    // Packages typed into the Container page that the linter warns about: torch over the NGC one (seed 000)
    // and an unpinned package, each pointed at on its line of the Dockerfile.
    const RunDocument demo = window.editor()->document();
    window.editor()->pages()->setCurrentIndex(RunEditor::kContainer);
    window.editor()->edit("/container/apt_packages", nlohmann::json::array({"htop"}));
    window.editor()->edit("/container/pip_packages", nlohmann::json::array({"transformers", "torch==2.4.0"}));
    ContainerPanel* container = window.editor()->container_panel();
    if (container->findings()->count() > 0) {  // as a click on the first finding does
        container->findings()->setCurrentRow(0);
        container->select_line(container->findings()->item(0)->data(Qt::UserRole).toInt());
    }
    if (Status s = grab(QStringLiteral("editor-container-lint")); !s.ok()) return s;
    window.editor()->set_document(demo);
    // A mistake, to show how a field with a problem looks and that Submit is then disabled.
    window.editor()->pages()->setCurrentIndex(RunEditor::kHyperparameters);
    window.editor()->edit("/training/learning_rate", -0.001);
    window.editor()->edit("/training/lr_scheduler_type", "cosine_typo");
    window.editor()->edit("/training/adam_beta1", 1.5);  // folded as advanced, unfolded by its problem
    if (Status s = grab(QStringLiteral("editor-invalid")); !s.ok()) return s;
    window.editor()->set_document(demo);
    // The presets gallery, where a run starts.
    window.editor()->show_preset_gallery();
    QWidget* gallery = window.editor()->preset_gallery()->window();
    const Status gallery_shot = grab(QStringLiteral("editor-presets"), gallery);
    gallery->close();
    if (!gallery_shot.ok()) return gallery_shot;
    // The model picker over the Model & data page, for the demo model with LoRA.
    window.editor()->pages()->setCurrentIndex(RunEditor::kModelData);
    window.editor()->edit("/adapter/method", "lora");
    window.editor()->show_model_picker();
    QWidget* picker = window.editor()->model_picker();
    const Status picker_shot = grab(QStringLiteral("editor-model"), picker);
    picker->close();
    window.editor()->set_document(demo);
    if (!picker_shot.ok()) return picker_shot;
    // The chat demo's data page, scrolled to what the model learns from: the rendered conversations.
    if (Status s = window.editor()->load_preset(QStringLiteral("demo-chat")); s.ok()) {
        window.editor()->pages()->setCurrentIndex(RunEditor::kModelData);
        settle();
        if (auto* scroll = qobject_cast<QScrollArea*>(window.editor()->pages()->currentWidget()))
            scroll->ensureWidgetVisible(window.editor()->data_preview(), 0, 0);
        const Status preview_shot = grab(QStringLiteral("editor-data-preview"));
        window.editor()->set_document(demo);
        if (!preview_shot.ok()) return preview_shot;
    }

    window.show_page(MainWindow::kMonitorPage);
    if (Status s = grab(QStringLiteral("monitor")); !s.ok()) return s;
    // A run of the engine itself (the demo's MLLOG, when packaging/demo.sh has made one) fills the
    // learning-rate and tokens/s plots that MLPerf logs leave empty.
    const QString demo_log = root + QStringLiteral("/build/demo-run/mllog.txt");
    if (QFileInfo::exists(demo_log)) {
        const std::vector<int> fixtures = window.monitor()->run_keys();
        pending = 1;
        if (window.open_log(demo_log).ok()) {
            while (pending > 0 && wait.elapsed() < 60'000)
                QApplication::processEvents(QEventLoop::AllEvents, 50);
            for (const int key : fixtures)
                window.monitor()->set_run_visible(key, false);
            if (Status s = grab(QStringLiteral("monitor-engine-run")); !s.ok()) return s;
            for (const int key : fixtures)
                window.monitor()->set_run_visible(key, true);
        }
    }
    window.show_page(MainWindow::kClustersPage);
    if (Status s = grab(QStringLiteral("clusters")); !s.ok()) return s;
    return written;
}

}  // namespace slipway::app
