// ClustersPage: profile list, profile dialogs, connection tests, the Health view and its doctor runs.
#include "clusters_page.h"

#include <QFile>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>

#include "clusters/cluster_dialogs.h"
#include "clusters/doctor_job.h"
#include "clusters/engine_build_job.h"
#include "clusters/engine_panel.h"
#include "clusters/health_view.h"
#include "core/engine_command.h"
#include "core/install_paths.h"
#include "editor/presets.h"

namespace slipway::app {
namespace {

// The list's first row. A function, not a constant: translators are installed after static initialization.
QString local_item_text() {
    return QObject::tr("This computer");
}

QString container_text(remote::ContainerMode mode) {
    switch (mode) {
        case remote::ContainerMode::kPyxis:
            return QObject::tr("pyxis (srun --container-image)");
        case remote::ContainerMode::kApptainer:
            return QObject::tr("apptainer (exec in the run's image)");
        case remote::ContainerMode::kSingularity:
            return QObject::tr("singularity (exec in the run's image)");
        case remote::ContainerMode::kNone:
            break;
    }
    return QObject::tr("none (bare srun)");
}

QString engine_source_text(remote::EngineSource source) {
    switch (source) {
        case remote::EngineSource::kImage:
            return QObject::tr("the image's slipway-engine");
        case remote::EngineSource::kDesktop:
            return QObject::tr("this computer's, uploaded with each run");
        case remote::EngineSource::kBuild:
            break;
    }
    return QObject::tr("built on the cluster, once per environment");
}

// Stops a job another one replaces; it deletes itself once its worker has ended.
void retire(ClusterJob* job) {
    if (job == nullptr) return;
    job->stop();
    if (job->running())
        QObject::connect(job, &ClusterJob::finished, job, &QObject::deleteLater);
    else
        job->deleteLater();
}

}  // namespace

ClustersPage::ClustersPage(ClusterSessions* sessions, const QString& resource_root, const QString& runs_dir,
                           QWidget* parent)
    : QWidget(parent), resource_root_(resource_root), runs_dir_(runs_dir), sessions_(sessions) {
    sessions_->set_callbacks([this] { return make_gui_callbacks(window()); });
    connect(sessions_, &ClusterSessions::session_created, this, &ClustersPage::on_session_created);
    list_ = new QListWidget(this);
    list_->setMaximumWidth(240);
    auto* add = new QPushButton(tr("Add..."), this);
    edit_ = new QPushButton(tr("Edit..."), this);
    remove_ = new QPushButton(tr("Remove"), this);
    test_ = new QPushButton(tr("Test connection"), this);
    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {add, edit_, remove_, test_})
        buttons->addWidget(b);
    buttons->addStretch(1);

    details_ = new QLabel(this);
    details_->setTextFormat(Qt::RichText);
    details_->setWordWrap(true);
    details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    partitions_ = new QTableWidget(0, 5, this);
    partitions_->setHorizontalHeaderLabels(
        {tr("Partition"), tr("Nodes"), tr("Idle"), tr("GPUs"), tr("GPU type")});
    partitions_->verticalHeader()->hide();
    partitions_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    partitions_->horizontalHeader()->setStretchLastSection(true);
    partitions_->hide();
    health_ = new HealthView(this);
    health_->hide();
    engine_ = new EnginePanel(this);
    engine_->hide();

    auto* right = new QVBoxLayout;
    right->addWidget(details_);
    right->addWidget(partitions_, 1);
    right->addWidget(engine_);
    right->addWidget(health_, 1);
    right->addStretch(0);
    auto* row = new QHBoxLayout;
    row->addWidget(list_);
    row->addLayout(right, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("<b>Clusters</b>"), this));
    layout->addLayout(buttons);
    layout->addLayout(row, 1);

    connect(list_, &QListWidget::currentRowChanged, this, &ClustersPage::show_details);
    connect(add, &QPushButton::clicked, this, [this] {
        remote::ClusterProfile blank;
        blank.engine_source = remote::EngineSource::kBuild;  // a new cluster's nodes are not this computer
        ProfileDialog dialog(blank, this);
        if (dialog.exec() != QDialog::Accepted) return;
        if (const Status s = add_profile(*dialog.profile()); !s.ok()) {
            QMessageBox::warning(this, tr("Add cluster"), QString::fromStdString(s.message()));
        }
    });
    connect(edit_, &QPushButton::clicked, this, &ClustersPage::edit_selected);
    connect(list_, &QListWidget::itemDoubleClicked, this, &ClustersPage::edit_selected);
    connect(remove_, &QPushButton::clicked, this, [this] {
        const int row = list_->currentRow();
        if (row < 1) return;
        const std::string name = profiles_[static_cast<size_t>(row - 1)].name;
        if (QMessageBox::question(this, tr("Remove cluster"),
                                  tr("Remove the profile %1? Runs on it stay in the history.")
                                      .arg(QString::fromStdString(name))) != QMessageBox::Yes) {
            return;
        }
        if (const Status s = remove_profile(name); !s.ok()) {
            QMessageBox::warning(this, tr("Remove cluster"), QString::fromStdString(s.message()));
        }
    });
    connect(test_, &QPushButton::clicked, this, &ClustersPage::test_selected);
    connect(health_, &HealthView::run_requested, this, &ClustersPage::run_doctor);
    connect(health_, &HealthView::cancel_requested, this, [this] {
        if (doctor_ != nullptr && doctor_->running()) doctor_->stop();
    });
    connect(engine_, &EnginePanel::build_requested, this, &ClustersPage::build_engine);
    connect(engine_, &EnginePanel::cancel_requested, this, [this] {
        if (engine_job_ != nullptr && engine_job_->running()) engine_job_->stop();
    });
    connect(engine_, &EnginePanel::demo_requested, this, [this] {
        if (engine_->cluster().empty()) return;
        engine_->remember_choice();
        emit demo_requested(QString::fromStdString(engine_->cluster()), engine_->choice());
    });
    refresh();
}

ClustersPage::~ClustersPage() {
    sessions_->set_callbacks({});  // its dialogs' parent goes with the page
}

void ClustersPage::refresh() {
    const QString selected =
        list_->currentItem() != nullptr ? list_->currentItem()->text() : local_item_text();
    const Result<std::vector<remote::ClusterProfile>> loaded = remote::ProfileStore().load();
    profiles_ = loaded.ok() ? *loaded : std::vector<remote::ClusterProfile>();
    if (!loaded.ok()) last_test_["__store__"] = QString::fromStdString(loaded.error());
    {
        const QSignalBlocker block(list_);
        list_->clear();
        list_->addItem(local_item_text());
        for (const remote::ClusterProfile& p : profiles_)
            list_->addItem(QString::fromStdString(p.name));
    }
    select(selected);
    sessions_->set_profiles(profiles_);
    emit profiles_changed(profiles_);
}

void ClustersPage::select(const QString& name) {
    const QList<QListWidgetItem*> found = list_->findItems(name, Qt::MatchExactly);
    list_->setCurrentItem(found.isEmpty() ? list_->item(0) : found.front());
    show_details();
}

void ClustersPage::on_session_created(const QString& profile, ClusterSession* session) {
    const std::string name = profile.toStdString();
    connect(session, &ClusterSession::tested, this,
            [this, name](int, bool ok, const QString& message, const QList<PartitionSummary>& partitions) {
                QString text =
                    (ok ? QStringLiteral("<span style='color:#2e7d32'>%1</span>")
                        : QStringLiteral("<span style='color:#c62828'>%1</span>"))
                        .arg(message.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
                last_test_[name] = text;
                QStringList names;
                for (const PartitionSummary& p : partitions)
                    names << p.name;
                if (ok) partitions_by_profile_[name] = partitions;
                show_details();
                if (ok) emit partitions_known(QString::fromStdString(name), names);
                emit tested(QString::fromStdString(name), ok, message);
            });
}

Status ClustersPage::add_profile(const remote::ClusterProfile& profile) {
    if (const Status s = remote::ProfileStore().put(profile); !s.ok()) return s;
    refresh();  // a changed profile's session is replaced (ClusterSessions::set_profiles)
    select(QString::fromStdString(profile.name));
    return Status::Ok();
}

Status ClustersPage::remove_profile(const std::string& name) {
    if (const Status s = remote::ProfileStore().remove(name); !s.ok()) return s;
    refresh();
    return Status::Ok();
}

void ClustersPage::edit_selected() {
    const int row = list_->currentRow();
    if (row < 1) return;
    ProfileDialog dialog(profiles_[static_cast<size_t>(row - 1)], this);
    if (dialog.exec() != QDialog::Accepted) return;
    if (const Status s = add_profile(*dialog.profile()); !s.ok()) {
        QMessageBox::warning(this, tr("Edit cluster"), QString::fromStdString(s.message()));
    }
}

void ClustersPage::run_doctor() {
    const int row = list_->currentRow();
    if (row < 1) return;
    const remote::ClusterProfile& profile = profiles_[static_cast<size_t>(row - 1)];
    retire(doctor_);  // its Slurm job is cancelled; what it still sends is dropped by id below
    DoctorOptions options = health_->doctor_options();
    options.engine = find_engine_binary();  // as a run on a bare-metal cluster deploys it
    auto* job = new DoctorJob(profile, make_gui_callbacks(window()), connector(), this);
    doctor_ = job;
    doctor_log_.clear();
    const int id = job->id();
    const auto current = [this, id] { return doctor_ != nullptr && doctor_->id() == id; };
    const auto shown = [this, job] { return health_->cluster() == job->profile().name; };
    connect(job, &ClusterJob::output, this, [this, current, shown](const QStringList& lines) {
        if (!current()) return;
        doctor_log_ += lines;
        if (shown()) health_->append_output(lines);
    });
    connect(job, &ClusterJob::finished, this, [this, job, current, shown](bool ok, const QString& message) {
        if (!current() || !shown()) return;
        health_->set_running(false);
        if (job->report()) health_->show_report(*job->report());
        health_->show_result(ok, message);
    });
    health_->set_running(true);
    job->start(std::move(options));
}

void ClustersPage::build_engine() {
    const int row = list_->currentRow();
    if (row < 1) return;
    const remote::ClusterProfile& profile = profiles_[static_cast<size_t>(row - 1)];
    engine_->remember_choice();
    QString demo;
    for (const Preset& preset : list_presets(resource_root_))
        if (!preset.user && preset.name == QString::fromUtf8(kDemoPreset)) demo = preset.path;
    const Result<RunConfig> config =
        demo.isEmpty()
            ? Result<RunConfig>(Status::Error("no shipped preset " + std::string(kDemoPreset) + " under " +
                                              resource_root_.toStdString() + "/resources/presets"))
            : config_in_environment(demo.toStdString(), engine_->choice());
    const std::string bundle_path = find_engine_bundle();
    const Result<remote::EngineBundle> bundle =
        bundle_path.empty() ? Result<remote::EngineBundle>(Status::Error(no_engine_bundle_text()))
                            : remote::read_engine_bundle(bundle_path);
    if (!config.ok() || !bundle.ok()) {
        engine_->show_result(false, QString::fromStdString(config.ok() ? bundle.error() : config.error()));
        return;
    }
    retire(engine_job_);  // its build job is cancelled; what it still sends is dropped by id below
    auto* job = new EngineBuildJob(profile, make_gui_callbacks(window()), connector(), this);
    engine_job_ = job;
    engine_log_.clear();
    const int id = job->id();
    const auto current = [this, id] { return engine_job_ != nullptr && engine_job_->id() == id; };
    const auto shown = [this, job] { return engine_->cluster() == job->profile().name; };
    connect(job, &ClusterJob::output, this, [this, current, shown](const QStringList& lines) {
        if (!current()) return;
        engine_log_ += lines;
        if (shown()) engine_->append_output(lines);
    });
    connect(job, &ClusterJob::finished, this, [this, current, shown](bool ok, const QString& message) {
        if (!current() || !shown()) return;
        engine_->set_building(false);
        engine_->show_result(ok, message);
    });
    engine_->set_building(true);
    job->start(*config, *bundle);
}

void ClustersPage::test_selected() {
    const int row = list_->currentRow();
    if (row < 1) return;
    const std::string name = profiles_[static_cast<size_t>(row - 1)].name;
    last_test_[name] = tr("Connecting...");
    show_details();
    if (ClusterSession* s = session(name)) s->test();
}

QString ClustersPage::partition_summary(const std::string& profile) const {
    const auto it = partitions_by_profile_.find(profile);
    if (it == partitions_by_profile_.end()) return QString();
    QStringList parts;
    for (const PartitionSummary& p : it->second) {
        QString text = tr("%1%2: %3 nodes, %4 idle")
                           .arg(p.name, p.is_default ? tr(" (default)") : QString())
                           .arg(p.nodes)
                           .arg(p.idle_nodes);
        if (p.gpus > 0) text += tr(", %1 GPUs %2").arg(p.gpus).arg(p.gpu_type);
        parts << text;
    }
    return parts.join(QStringLiteral("; "));
}

QString ClustersPage::details_text() const {
    return details_->text();
}

void ClustersPage::show_details() {
    const int row = list_->currentRow();
    edit_->setEnabled(row > 0);
    remove_->setEnabled(row > 0);
    test_->setEnabled(row > 0);
    QString text;
    auto add_row = [&text](const QString& k, const QString& v) {
        text += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(k, v);
    };
    if (row <= 0) {
        partitions_->hide();
        health_->hide();
        engine_->hide();
        const QString engine = QFile::decodeName(find_engine_binary().c_str());
        text = tr(
            "<h3>This computer</h3>"
            "<p>The embedded default: runs <code>slipway-engine</code> here, without SSH or Slurm. "
            "The run config's <code>slurm.ntasks_per_node</code> sets the local ranks; inputs with relative "
            "paths are read from the resource folder, outputs go to the run's own folder.</p>"
            "<table cellspacing=6>");
        add_row(tr("Engine"), engine.isEmpty()
                                  ? tr("<span style='color:#c62828'>not found next to slipway or on "
                                       "PATH: build it with SLIPWAY_BUILD_ENGINE=ON</span>")
                                  : engine.toHtmlEscaped());
        add_row(
            tr("Command"),
            QStringLiteral("<code>%1</code>")
                .arg(QString::fromStdString(command_line("slipway-engine", engine_arguments("RUN.json", 2)))
                         .toHtmlEscaped()));
        add_row(tr("CPU cores"), QString::number(QThread::idealThreadCount()));
        add_row(tr("Resource folder"),
                resource_root_.isEmpty() ? tr("not found") : resource_root_.toHtmlEscaped());
        add_row(tr("Runs folder"), runs_dir_.toHtmlEscaped());
        text += QStringLiteral("</table>") +
                tr("<p>Add a cluster profile to submit to Slurm over SSH. Profiles live in <code>%1</code>; "
                   "secrets are never stored.</p>")
                    .arg(QString::fromStdString(remote::default_clusters_file()).toHtmlEscaped());
        details_->setText(text);
        return;
    }
    const remote::ClusterProfile& p = profiles_[static_cast<size_t>(row - 1)];
    text = QStringLiteral("<h3>%1</h3><table cellspacing=6>")
               .arg(QString::fromStdString(p.name).toHtmlEscaped());
    add_row(tr("Login node"),
            QString::fromStdString(p.host + (p.port ? ":" + std::to_string(*p.port) : "")).toHtmlEscaped());
    add_row(tr("User"),
            p.user.empty() ? tr("(ssh config, else local)") : QString::fromStdString(p.user).toHtmlEscaped());
    if (!p.identity_file.empty()) add_row(tr("Key"), QString::fromStdString(p.identity_file).toHtmlEscaped());
    if (!p.proxy_jump.empty()) add_row(tr("Jump host"), QString::fromStdString(p.proxy_jump).toHtmlEscaped());
    add_row(tr("Remote folder"), QString::fromStdString(p.remote_workdir).toHtmlEscaped());
    add_row(tr("Containers"), container_text(p.container));
    add_row(tr("Engine"), engine_source_text(remote::engine_source_of(p)));
    if (!p.env_setup.empty()) {
        QStringList lines;
        for (const std::string& line : p.env_setup)
            lines << QString::fromStdString(line).toHtmlEscaped();
        add_row(tr("Environment setup"),
                QStringLiteral("<code>%1</code>").arg(lines.join(QStringLiteral("<br>"))));
    }
    if (!p.default_partition.empty()) {
        add_row(tr("Default partition"), QString::fromStdString(p.default_partition).toHtmlEscaped());
    }
    text += QStringLiteral("</table>");
    const auto it = last_test_.find(p.name);
    text += QStringLiteral("<p>%1</p>")
                .arg(it == last_test_.end() ? tr("Not tested yet: Test connection asks "
                                                 "Slurm for its partitions.")
                                            : it->second);
    details_->setText(text);
    const auto known = partitions_by_profile_.find(p.name);
    const QList<PartitionSummary> partitions =
        known == partitions_by_profile_.end() ? QList<PartitionSummary>() : known->second;
    partitions_->setRowCount(partitions.size());
    for (int r = 0; r < partitions.size(); ++r) {
        const PartitionSummary& s = partitions[r];
        const QStringList cells = {s.name + (s.is_default ? QStringLiteral(" *") : QString()),
                                   QString::number(s.nodes), QString::number(s.idle_nodes),
                                   QString::number(s.gpus), s.gpu_type};
        for (int c = 0; c < cells.size(); ++c)
            partitions_->setItem(r, c, new QTableWidgetItem(cells[c]));
    }
    partitions_->setVisible(!partitions.isEmpty());
    QStringList names, with_gpus;
    for (const PartitionSummary& s : partitions) {
        // Slurm's default partition first: what a run that names none gets.
        s.is_default ? names.prepend(s.name) : names.append(s.name);
        if (s.gpus > 0) with_gpus << s.name;
    }
    const bool engine_switched = engine_->cluster() != p.name;
    engine_->show_cluster(p, names, with_gpus);
    engine_->show();
    if (engine_switched && engine_job_ != nullptr && engine_job_->profile().name == p.name) {
        engine_->set_building(engine_job_->running());
        engine_->append_output(engine_log_);
    }
    const bool switched = health_->cluster() != p.name;
    health_->show_cluster(p);
    health_->show();
    if (switched && doctor_ != nullptr && doctor_->running() && doctor_->profile().name == p.name) {
        health_->set_running(true);
        health_->append_output(doctor_log_);
    }
}

}  // namespace slipway::app
