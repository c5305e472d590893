// MainWindow: pages, menus, settings, the run tracker's wiring to the pages, notifications.
#include "main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QKeySequence>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QSystemTrayIcon>

#include <algorithm>

#include "adapt/adapt_page.h"
#include "app_settings.h"
#include "chat/chat_page.h"
#include "chat/gguf_export.h"
#include "chat/run_chat_target.h"
#include "clusters/cluster_dialogs.h"
#include "clusters/pipeline_job.h"
#include "clusters/remote_browser.h"
#include "clusters_page.h"
#include "core/install_paths.h"
#include "core/run_state.h"
#include "core/run_state_display.h"
#include "editor/container_panel.h"
#include "editor/field_editor.h"
#include "editor/run_editor.h"
#include "history/run_history.h"
#include "i18n/ui_language.h"
#include "monitor/metric_plot.h"
#include "monitor/monitor_widget.h"
#include "remote/slurm/cluster_profile.h"
#include "runs/run_tracker.h"
#include "runs/runs_model.h"
#include "runs_page.h"
#include "settings_keys.h"

namespace slipway::app {
namespace {

constexpr int kMaxRecent = 8;

}  // namespace

MainWindow::MainWindow(const QString& history_path, QWidget* parent)
    : QMainWindow(parent), resource_root_(QString::fromStdString(resource_root())) {
    setWindowTitle(QStringLiteral("Slipway"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/slipway.png")));
    resize(1280, 820);
    const QString history_problem = open_history(history_path);
    RunTracker::Options options;
    options.resource_root = resource_root_;
    options.local_runs_dir = runs_dir();
    options.engine_binary = QFile::decodeName(find_engine_binary().c_str());
    tracker_ = std::make_unique<RunTracker>(history_.get(), &follow_, &sessions_, options);
    make_pages(options.engine_binary);
    wire_adaptation_page();
    wire_editor_and_monitor();
    wire_runs_page();
    wire_gguf_export();
    wire_clusters_page();
    if (QSystemTrayIcon::isSystemTrayAvailable()) {
        tray_ = new QSystemTrayIcon(windowIcon(), this);
        tray_->setToolTip(QStringLiteral("Slipway"));
        tray_->show();
    }
    build_menus();
    restore_settings();

    tracker_->recover_after_restart();  // runs the previous session left "running" or "following"
    statusBar()->showMessage(
        history_problem.isEmpty()
            ? tr("Ready. File > Open log... plots any MLLOG log; the editor submits runs.")
            : tr("Run history unavailable: %1").arg(history_problem));
}

QString MainWindow::open_history(const QString& history_path) {
    // The user's own history imports the CLI's old JSON run records once; a history named by the caller
    // (tests, a second profile) imports nothing.
    Result<std::unique_ptr<RunHistory>> history =
        history_path.isEmpty() ? RunHistory::open_default() : RunHistory::open(history_path.toStdString());
    if (!history.ok()) return QString::fromStdString(history.error());
    history_ = std::move(*history);
    sessions_.set_store_path(
        QString::fromStdString(history_->path()));  // cluster workers record new jobs there at once
    return QString();
}

void MainWindow::make_pages(const QString& engine_binary) {
    nav_ = new QListWidget(this);
    nav_->setFixedWidth(120);
    QFont nav_font = nav_->font();
    nav_font.setPointSize(nav_font.pointSize() + 1);
    nav_->setFont(nav_font);
    nav_->setSpacing(3);
    stack_ = new QStackedWidget(this);
    // Every run, stored or followed: the Runs page shows its stored rows, the monitor's list its followed
    // ones.
    runs_model_ = std::make_unique<RunsModel>(history_.get(), tracker_.get());
    runs_ = new RunsPage(history_.get(), runs_model_.get(), stack_);
    editor_ = new RunEditor(resource_root_, stack_);
    monitor_ = new MonitorWidget(tracker_.get(), runs_model_.get(), stack_);
    clusters_ = new ClustersPage(&sessions_, resource_root_, runs_dir(), stack_);
    chat_ = new ChatPage(
        history_.get(), [this](const StoredRun* run) { return chat_transport(run); }, stack_);
    // Pipelines started on the Adaptation page: each step is a row in the history the Runs page reads.
    adapt_ = new AdaptPage(
        resource_root_, runs_dir(),
        [] {
            QStringList names;
            if (const auto profiles = remote::ProfileStore().load(); profiles.ok()) {
                for (const remote::ClusterProfile& p : *profiles)
                    names << QString::fromStdString(p.name);
            }
            return names;
        },
        stack_);
    adapt_->set_local_runner(engine_binary,
                             history_ != nullptr ? QString::fromStdString(history_->path()) : QString());
    // In the order of Page: the list's rows and the stack's pages are its values.
    const std::pair<QString, QWidget*> pages[] = {{tr("Runs"), runs_},       {tr("Editor"), editor_},
                                                  {tr("Monitor"), monitor_}, {tr("Clusters"), clusters_},
                                                  {tr("Chat"), chat_},       {tr("Adaptation"), adapt_}};
    for (const auto& [title, page] : pages) {
        nav_->addItem(title);
        stack_->addWidget(page);
    }
    auto* central = new QWidget(this);
    auto* layout = new QHBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(nav_);
    layout->addWidget(stack_, 1);
    setCentralWidget(central);
    connect(nav_, &QListWidget::currentRowChanged, stack_, &QStackedWidget::setCurrentIndex);
}

void MainWindow::wire_adaptation_page() {
    connect(adapt_, &AdaptPage::progressed, runs_, &RunsPage::reload);
    // Pipelines go to a cluster through a PipelineJob with the window's profiles, dialogs and connector.
    adapt_->set_cluster_jobs([this](const QString& name) -> PipelineJob* {
        for (const remote::ClusterProfile& profile : clusters_->profiles())
            if (profile.name == name.toStdString())
                return new PipelineJob(profile, make_gui_callbacks(this), clusters_->connector());
        return nullptr;
    });
    // A training step of a pipeline, started on This computer or queued on a cluster: followed from the
    // page's own event.
    connect(adapt_, &AdaptPage::training_step_started, this, [this](qint64 store_id) {
        if (tracker_->run_for_store(store_id) != 0) return;
        if (const Result<int> key = tracker_->resume(store_id); !key.ok())
            statusBar()->showMessage(QString::fromStdString(key.error()));
    });
    connect(adapt_, &AdaptPage::finished, runs_, &RunsPage::reload);
}

void MainWindow::wire_editor_and_monitor() {
    connect(editor_, &RunEditor::submit_requested, this, [this] {
        const Result<int> key = submit_current();
        if (!key.ok()) QMessageBox::warning(this, tr("Submit"), QString::fromStdString(key.error()));
    });
    connect(monitor_, &MonitorWidget::cancel_requested, this, &MainWindow::cancel_run);
    connect(monitor_, &MonitorWidget::export_requested, this, &MainWindow::export_plot);
    connect_tracker();
    connect(editor_->container_panel(), &ContainerPanel::image_task_requested, this,
            [this](ImageAction action, const QString& image) {
                if (const Status s = start_image_task(action, image); !s.ok())
                    statusBar()->showMessage(QString::fromStdString(s.message()));
            });
}

void MainWindow::wire_runs_page() {
    connect(runs_, &RunsPage::show_requested, this, [this](int64_t id) {
        if (const Result<int> r = show_history_run(id); !r.ok())
            statusBar()->showMessage(QString::fromStdString(r.error()));
    });
    connect(runs_, &RunsPage::follow_requested, this, [this](int64_t id) {
        if (const Result<int> r = resume_history_run(id); !r.ok())
            statusBar()->showMessage(QString::fromStdString(r.error()));
    });
    connect(runs_, &RunsPage::compare_requested, this, &MainWindow::compare_runs);
    connect(runs_, &RunsPage::chat_requested, this, [this](int64_t id) {
        show_page(kChatPage);
        if (const Status s = chat_->choose_run(id); !s.ok())
            statusBar()->showMessage(QString::fromStdString(s.message()));
    });
    connect(runs_, &RunsPage::delete_requested, this, [this](int64_t id) {
        if (const Status s = tracker_->delete_stored(id); !s.ok())
            statusBar()->showMessage(QString::fromStdString(s.message()));
    });
    connect(runs_, &RunsPage::edit_requested, this, [this](int64_t id) {
        const Result<StoredRun> run = history_->run(id);
        if (!run.ok()) return;
        const nlohmann::json doc = nlohmann::json::parse(run->config_json, nullptr, false);
        if (doc.is_discarded()) return;
        RunDocument d;
        d.set_config(parse_run_config(doc).config);
        editor_->set_document(d);
        show_page(kEditorPage);
    });
}

void MainWindow::wire_gguf_export() {
    gguf_export_ = new GgufExport(this);
    connect(gguf_export_, &GgufExport::finished, this, [this](bool ok, const QString& message) {
        statusBar()->showMessage(ok ? tr("GGUF written: %1").arg(message)
                                    : tr("GGUF export failed: %1").arg(message));
    });
    connect(runs_, &RunsPage::export_gguf_requested, this, [this](int64_t id) {
        const Result<StoredRun> run = history_->run(id);
        Result<ChatTarget> target = run.ok() ? chat_target_of_run(*run) : Result<ChatTarget>(run.status());
        const Status s =
            target.ok() ? export_gguf(*target, QString::fromStdString(run->name)) : target.status();
        if (!s.ok()) statusBar()->showMessage(QString::fromStdString(s.message()));
    });
    connect(chat_, &ChatPage::export_gguf_requested, this, [this](const ChatTarget& target) {
        if (const Status s = export_gguf(target, target.label); !s.ok())
            statusBar()->showMessage(QString::fromStdString(s.message()));
    });
}

void MainWindow::wire_clusters_page() {
    connect(clusters_, &ClustersPage::profiles_changed, editor_, &RunEditor::set_profiles);
    connect(editor_, &RunEditor::remote_browse_requested, this,
            [this](const QString& profile, const std::string& pointer, bool folder) {
                ClusterSession* session = clusters_->session(profile.toStdString());
                if (session == nullptr) return;
                const nlohmann::json current = editor_->document().value(pointer);
                QString start =
                    current.is_string() ? QString::fromStdString(current.get<std::string>()) : QString();
                if (!start.startsWith(QLatin1Char('/'))) start.clear();
                if (!folder && !start.isEmpty()) start = start.left(start.lastIndexOf(QLatin1Char('/')));
                RemoteBrowser browser(session, folder, start, this);
                if (browser.exec() == QDialog::Accepted)
                    editor_->field(pointer)->set_browsed(browser.chosen());
            });
    connect(clusters_, &ClustersPage::partitions_known, this,
            [this](const QString& profile, const QStringList& partitions) {
                editor_->set_partitions(partitions, profile,
                                        clusters_->partition_summary(profile.toStdString()));
            });
    connect(clusters_, &ClustersPage::tested, this,
            [this](const QString& profile, bool ok, const QString& message) {
                statusBar()->showMessage(
                    tr("%1: %2").arg(profile, ok ? message : tr("connection failed: %1").arg(message)));
            });
    connect(clusters_, &ClustersPage::demo_requested, this,
            [this](const QString& profile, const EnvironmentChoice& choice) {
                if (const Result<int> key = submit_demo(profile, choice); !key.ok())
                    QMessageBox::warning(this, tr("Run the demo on %1").arg(profile),
                                         QString::fromStdString(key.error()));
            });
    editor_->set_profiles(clusters_->profiles());
}

MainWindow::~MainWindow() {
    delete takeCentralWidget();  // the pages are views of the tracker: they go first
}

void MainWindow::connect_tracker() {
    RunTracker* tracker = tracker_.get();
    connect(tracker, &RunTracker::alert, this, [this](int key, const RunAlert& alert) {
        const TrackedRun* run = tracker_->run(key);
        notify(run != nullptr ? QString::fromStdString(run->name) : QString(), alert);
    });
    connect(tracker, &RunTracker::message, this,
            [this](const QString& text) { statusBar()->showMessage(text); });
    connect(tracker, &RunTracker::connection_changed, this,
            [this](const QString& profile, bool up, const QString& m) {
                statusBar()->showMessage(up ? tr("%1: connected (%2)").arg(profile, m)
                                            : tr("%1: connection lost, reconnecting: %2").arg(profile, m));
            });
    connect(tracker, &RunTracker::store_changed, runs_, &RunsPage::reload);
    connect(tracker, &RunTracker::store_changed, chat_, &ChatPage::reload);
    connect(tracker, &RunTracker::loaded, this, [this](int key) {
        if (const TrackedRun* r = tracker_->run(key)) {
            statusBar()->showMessage(tr("Read %1: %2 points, %3 bad MLLOG lines")
                                         .arg(QString::fromStdString(r->log_path))
                                         .arg(r->metrics.total_points())
                                         .arg(r->bad_lines));
        }
    });
    connect(tracker, &RunTracker::local_run_finished, this, &MainWindow::local_run_finished);
}

QString MainWindow::runs_dir() const {
    return QFile::decodeName(default_local_runs_dir().c_str());
}

void MainWindow::build_menus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* new_run = file->addAction(tr("&New run"));
    new_run->setShortcut(QKeySequence::New);
    connect(new_run, &QAction::triggered, this, [this] {
        editor_->set_document(RunDocument());
        show_page(kEditorPage);
    });
    QAction* open_config = file->addAction(tr("&Open run config..."));
    open_config->setShortcut(QKeySequence::Open);
    connect(open_config, &QAction::triggered, this, &MainWindow::choose_config);
    recent_menu_ = file->addMenu(tr("Recent run configs"));
    QAction* save_as = file->addAction(tr("&Save run config as..."));
    save_as->setShortcut(QKeySequence::Save);
    connect(save_as, &QAction::triggered, this, &MainWindow::save_config_as);
    QAction* import = file->addAction(tr("&Import training script..."));
    import->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    connect(import, &QAction::triggered, this, &MainWindow::import_script);
    file->addSeparator();
    QAction* open_log_action = file->addAction(tr("Open &log..."));
    open_log_action->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    connect(open_log_action, &QAction::triggered, this, &MainWindow::choose_log);
    QAction* remote_log = file->addAction(tr("Open log on a &cluster..."));
    connect(remote_log, &QAction::triggered, this, &MainWindow::choose_remote_log);
    QAction* png = file->addAction(tr("Export plots as &PNG..."));
    connect(png, &QAction::triggered, this, [this] { export_plot(true); });
    QAction* csv = file->addAction(tr("Export plots as &CSV..."));
    connect(csv, &QAction::triggered, this, [this] { export_plot(false); });
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"));
    quit->setShortcut(QKeySequence::Quit);
    connect(quit, &QAction::triggered, this, &QWidget::close);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    QAction* submit = run->addAction(tr("&Submit"));
    submit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
    connect(submit, &QAction::triggered, this, [this] {
        if (!editor_->document().valid()) {
            show_page(kEditorPage);
            statusBar()->showMessage(tr("The run config has problems; fix them first."));
            return;
        }
        editor_->request_submit();  // asks first when the plan says it does not fit
    });
    QAction* cancel = run->addAction(tr("&Cancel selected run"));
    cancel->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    connect(cancel, &QAction::triggered, this, [this] { cancel_run(monitor_->current_run()); });

    QMenu* view = menuBar()->addMenu(tr("&View"));
    const QStringList names = {tr("&Runs"),     tr("&Editor"), tr("&Monitor"),
                               tr("&Clusters"), tr("C&hat"),   tr("Lan&guage adaptation")};
    for (int i = 0; i < names.size(); ++i) {
        QAction* a = view->addAction(names[i]);
        a->setShortcut(QKeySequence(Qt::CTRL | (Qt::Key_1 + i)));
        connect(a, &QAction::triggered, this, [this, i] { show_page(static_cast<Page>(i)); });
    }
    view->addSeparator();
    build_language_menu(view->addMenu(tr("&Language")));

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* about = help->addAction(tr("&About Slipway"));
    connect(about, &QAction::triggered, this, [this] {
        QMessageBox::about(this, tr("About Slipway"),
                           tr("<b>Slipway %1</b><p>Fine-tune LLMs on Slurm GPU clusters: run editor, live "
                              "monitor, run history, and the slipway-engine trainer.</p>")
                               .arg(QCoreApplication::applicationVersion()));
    });
}

void MainWindow::build_language_menu(QMenu* menu) {
    QAction* note = menu->addAction(tr("Takes effect at the next start"));
    note->setEnabled(false);
    menu->addSeparator();
    auto* group = new QActionGroup(menu);
    const QString saved = saved_ui_language();
    auto add_choice = [&](const QString& text, const QString& code) {
        QAction* a = menu->addAction(text);
        a->setCheckable(true);
        a->setChecked(code == saved);
        group->addAction(a);
        connect(a, &QAction::triggered, this, [this, code] {
            save_ui_language(code);
            statusBar()->showMessage(tr("The interface language changes at the next start of Slipway."));
        });
    };
    add_choice(tr("System"), QString());
    for (const UiLanguage& language : ui_languages())
        add_choice(language.native_name, language.code);
}

Status MainWindow::export_gguf(const ChatTarget& target, const QString& suggested_name) {
    if (Status s = GgufExport::check_local(target); !s.ok()) return s;
    QString name = suggested_name;
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-"));
    const QString out = QFileDialog::getSaveFileName(
        this, tr("Export GGUF"),
        QDir::home().filePath((name.isEmpty() ? QStringLiteral("model") : name) + ".gguf"),
        tr("GGUF models (*.gguf)"));
    if (out.isEmpty()) return Status::Ok();
    bool chosen = false;
    const QString type = QInputDialog::getItem(
        this, tr("Export GGUF"),
        tr("Weights as (q8_0: 8-bit, about a quarter of f32; f16 / bf16: half; f32: exact)"),
        GgufExport::types(), 0, false, &chosen);
    if (!chosen) return Status::Ok();
    if (Status s = gguf_export_->start(target, out, type); !s.ok()) return s;
    statusBar()->showMessage(tr("Exporting %1 as GGUF (%2)...").arg(target.label, type));
    return Status::Ok();
}

void MainWindow::show_page(Page page) {
    nav_->setCurrentRow(static_cast<int>(page));
}

MainWindow::Page MainWindow::current_page() const {
    return static_cast<Page>(stack_->currentIndex());
}

void MainWindow::restore_settings() {
    QSettings s = app_settings();
    restoreGeometry(s.value(settings_keys::kWindowGeometry).toByteArray());
    restoreState(s.value(settings_keys::kWindowState).toByteArray());
    show_page(static_cast<Page>(s.value(settings_keys::kWindowPage, static_cast<int>(kEditorPage)).toInt()));
    monitor_->set_smoothing(s.value(settings_keys::kMonitorSmoothing, 0.6).toDouble());
    monitor_->set_x_axis(static_cast<XAxis>(s.value(settings_keys::kMonitorXAxis, 0).toInt()));
    monitor_->set_log_scale(s.value(settings_keys::kMonitorLogScale, false).toBool());
    // Stall alerts: N x the median step interval without a step, at least M seconds (slipway.ini); the
    // run board's own defaults where the file says nothing.
    const RunBoard::Options defaults;
    tracker_->set_stall_policy(
        s.value(settings_keys::kStallFactor, defaults.stall_factor).toDouble(),
        s.value(settings_keys::kStallMinSeconds, static_cast<qlonglong>(defaults.stall_min_ms / 1000))
                .toLongLong() *
            1000);
    recent_ = s.value(settings_keys::kRecentConfigs).toStringList();
    rebuild_recent_menu();
}

void MainWindow::save_settings() const {
    QSettings s = app_settings();
    s.setValue(settings_keys::kWindowGeometry, saveGeometry());
    s.setValue(settings_keys::kWindowState, saveState());
    s.setValue(settings_keys::kWindowPage, static_cast<int>(current_page()));
    s.setValue(settings_keys::kMonitorSmoothing, monitor_->plot(Metric::kTrainLoss)->smoothing());
    s.setValue(settings_keys::kMonitorXAxis, static_cast<int>(monitor_->x_axis()));
    s.setValue(settings_keys::kMonitorLogScale,
               monitor_->plot(Metric::kTrainLoss)->yAxis->scaleType() == QCPAxis::stLogarithmic);
    s.setValue(settings_keys::kRecentConfigs, recent_);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    const int training = tracker_->local_runs_active();
    if (training > 0 &&
        QMessageBox::question(
            this, tr("Quit Slipway"),
            tr("%n run(s) still training on this computer. Quitting stops them (a checkpoint is "
               "saved). Quit anyway?",
               nullptr, training)) != QMessageBox::Yes) {
        event->ignore();
        return;
    }
    save_settings();
    QMainWindow::closeEvent(event);
}

void MainWindow::add_recent(const QString& path) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent_.removeAll(absolute);
    recent_.prepend(absolute);
    while (recent_.size() > kMaxRecent)
        recent_.removeLast();
    rebuild_recent_menu();
    save_settings();
}

void MainWindow::rebuild_recent_menu() {
    recent_menu_->clear();
    for (const QString& path : recent_) {
        QAction* a = recent_menu_->addAction(QFileInfo(path).fileName());
        a->setToolTip(path);
        connect(a, &QAction::triggered, this, [this, path] {
            if (const Status s = open_run_config(path); !s.ok()) {
                QMessageBox::warning(this, tr("Open run config"), QString::fromStdString(s.message()));
            }
        });
    }
    recent_menu_->setEnabled(!recent_.isEmpty());
}

Status MainWindow::open_log(const QString& path) {
    const Result<int> key = tracker_->open_log(path);
    if (!key.ok()) return key.status();
    show_page(kMonitorPage);
    statusBar()->showMessage(tr("Reading %1").arg(path));
    return Status::Ok();
}

void MainWindow::follow_log(const QString& path) {
    tracker_->follow_log(path, QFileInfo(path).fileName());
    show_page(kMonitorPage);
    statusBar()->showMessage(tr("Following %1").arg(path));
}

Status MainWindow::open_run_config(const QString& path) {
    if (const Status s = editor_->load_file(path); !s.ok()) return s;
    add_recent(path);
    show_page(kEditorPage);
    statusBar()->showMessage(tr("Opened %1").arg(path));
    return Status::Ok();
}

void MainWindow::choose_log() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open log"), QString(),
                                                      tr("Logs (*.txt *.log *.out);;All files (*)"));
    if (path.isEmpty()) return;
    if (const Status s = open_log(path); !s.ok()) {
        QMessageBox::warning(this, tr("Open log"), QString::fromStdString(s.message()));
    }
}

void MainWindow::choose_config() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open run config"), QString(),
                                                      tr("Run configs (*.json);;All files (*)"));
    if (path.isEmpty()) return;
    if (const Status s = open_run_config(path); !s.ok()) {
        QMessageBox::warning(this, tr("Open run config"), QString::fromStdString(s.message()));
    }
}

void MainWindow::save_config_as() {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save run config"), QString::fromStdString(editor_->document().config().name) + ".json",
        tr("Run configs (*.json)"));
    if (path.isEmpty()) return;
    if (const Status s = editor_->save_file(path); !s.ok()) {
        QMessageBox::warning(this, tr("Save run config"), QString::fromStdString(s.message()));
        return;
    }
    add_recent(path);
    statusBar()->showMessage(tr("Saved %1").arg(path));
}

void MainWindow::import_script() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Import training script"), QString(),
                                                      tr("Shell scripts (*.sh);;All files (*)"));
    if (path.isEmpty()) return;
    const Result<QStringList> notes = editor_->import_script(path);
    if (!notes.ok()) {
        QMessageBox::warning(this, tr("Import training script"), QString::fromStdString(notes.error()));
        return;
    }
    show_page(kEditorPage);
    if (!notes->isEmpty()) QMessageBox::information(this, tr("Imported"), notes->join(QLatin1Char('\n')));
}

void MainWindow::export_plot(bool png) {
    const QString path = QFileDialog::getSaveFileName(
        this, png ? tr("Export plots as PNG") : tr("Export plots as CSV"),
        png ? QStringLiteral("slipway-plots.png") : QStringLiteral("slipway-plots.csv"),
        png ? tr("PNG images (*.png)") : tr("CSV files (*.csv)"));
    if (path.isEmpty()) return;
    const Status s = png ? monitor_->export_png(path) : monitor_->export_csv(path);
    statusBar()->showMessage(s.ok() ? tr("Wrote %1").arg(path) : QString::fromStdString(s.message()));
}

Result<int> MainWindow::submit_local(const QStringList& overrides) {
    const RunDocument& doc = editor_->document();
    if (!doc.valid())
        return Result<int>::Error("the run config has problems:\n" + format_problems(doc.problems()));
    const Result<int> key = tracker_->submit_local(doc.config(), overrides);
    if (key.ok()) show_page(kMonitorPage);
    return key;
}

void MainWindow::cancel_run(int monitor_key) {
    if (monitor_key == 0) return;
    if (const Status s = tracker_->cancel(monitor_key); !s.ok())
        statusBar()->showMessage(tr("Cancel: %1").arg(QString::fromStdString(s.message())));
}

Result<int> MainWindow::submit_current() {
    const QString target = editor_->submit_target();
    return target.isEmpty() ? submit_local() : submit_remote(target);
}

Result<int> MainWindow::show_history_run(int64_t run_id) {
    const Result<int> key = tracker_->show_stored(run_id);
    if (!key.ok()) return key;
    monitor_->set_current_run(*key);
    show_page(kMonitorPage);
    return key;
}

Status MainWindow::compare_runs(const QList<qint64>& run_ids) {
    std::vector<int> keys;
    for (const qint64 id : run_ids) {
        const Result<int> key = tracker_->show_stored(id);  // a run shown already is reused
        if (!key.ok()) return key.status();
        keys.push_back(*key);
    }
    // Only the compared runs stay visible; the others stay listed, unchecked, one click away.
    for (const int key : monitor_->run_keys())
        monitor_->set_run_visible(key, std::find(keys.begin(), keys.end(), key) != keys.end());
    if (!keys.empty()) monitor_->set_current_run(keys.front());
    show_page(kMonitorPage);
    statusBar()->showMessage(tr("Comparing %n run(s)", nullptr, static_cast<int>(keys.size())));
    return Status::Ok();
}

Result<int> MainWindow::resume_history_run(int64_t run_id) {
    const Result<int> key = tracker_->resume(run_id);
    if (key.ok()) show_page(kMonitorPage);
    return key;
}

void MainWindow::notify(const QString& run_name, const RunAlert& alert) {
    static const char* titles[] = {QT_TR_NOOP("finished"), QT_TR_NOOP("failed"),
                                   QT_TR_NOOP("reached its target"), QT_TR_NOOP("stalled")};
    const QString title = tr("Slipway: %1 %2").arg(run_name, tr(titles[static_cast<int>(alert.kind)]));
    const QString message =
        QStringLiteral("%1: %2").arg(run_name, display_detail(QString::fromStdString(alert.message)));
    if (tray_ != nullptr) {
        tray_->showMessage(title, message,
                           alert.kind == RunAlertKind::kFailed || alert.kind == RunAlertKind::kStalled
                               ? QSystemTrayIcon::Warning
                               : QSystemTrayIcon::Information);
    }
    statusBar()->showMessage(message);
    emit notified(title, message);
}

}  // namespace slipway::app
