// Cluster dialogs and the GUI-thread bridge for SSH questions.
#include "clusters/cluster_dialogs.h"

#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QThread>

#include "remote/ssh/prompt_text.h"

namespace slipway::app {
namespace {

// Runs `ask` on the GUI thread and waits for its answer (directly when already there).
template <typename T, typename F>
T on_gui_thread(F ask) {
    if (QThread::currentThread() == qApp->thread()) return ask();
    T answer{};
    QMetaObject::invokeMethod(
        qApp, [&] { answer = ask(); }, Qt::BlockingQueuedConnection);
    return answer;
}

// The label is shown as plain text: a server's prompt text must not render as rich text (links, images).
std::optional<std::string> ask_secret(QWidget* parent, const QString& title, const QString& label,
                                      bool echo) {
    QInputDialog dialog(parent);
    dialog.setWindowTitle(title);
    dialog.setLabelText(label);
    dialog.setTextEchoMode(echo ? QLineEdit::Normal : QLineEdit::Password);
    for (QLabel* text : dialog.findChildren<QLabel*>())
        text->setTextFormat(Qt::PlainText);
    if (dialog.exec() != QDialog::Accepted) return std::nullopt;
    return dialog.textValue().toStdString();
}

std::string join_lines(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines)
        text += (text.empty() ? "" : "\n") + line;
    return text;
}

}  // namespace

ProfileDialog::ProfileDialog(const remote::ClusterProfile& p, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Cluster profile"));
    auto* form = new QFormLayout(this);
    auto line = [this](const std::string& value, const QString& tip) {
        auto* edit = new QLineEdit(QString::fromStdString(value), this);
        edit->setToolTip(tip);
        return edit;
    };
    name_ = line(p.name, tr("The profile's own name: letters, digits, '.', '_' and '-'"));
    host_ = line(p.host, tr("Login node: host name, address, or a Host alias of ~/.ssh/config"));
    port_ = new QSpinBox(this);
    port_->setRange(0, 65535);
    port_->setSpecialValueText(tr("from ssh config, else 22"));
    port_->setValue(p.port.value_or(0));
    user_ = line(p.user, tr("Empty: ssh config's User, else your local user name"));
    identity_ =
        line(p.identity_file, tr("Private key file; its passphrase is asked when needed and never stored"));
    jump_ = line(p.proxy_jump, tr("[user@]host[:port] of a jump host; empty = none"));
    workdir_ = line(p.remote_workdir, tr("Runs go to <folder>/runs/<run-id> on the cluster"));
    container_ = new QComboBox(this);
    for (const remote::ContainerMode mode :
         {remote::ContainerMode::kNone, remote::ContainerMode::kPyxis, remote::ContainerMode::kApptainer,
          remote::ContainerMode::kSingularity})
        container_->addItem(QString::fromLatin1(remote::container_mode_name(mode)));
    container_->setCurrentText(QString::fromLatin1(remote::container_mode_name(p.container)));
    container_->setToolTip(
        tr("Where a run's steps run: none: on the node, after the environment setup; pyxis: srun "
           "--container-image with the run's image; apptainer or singularity: exec in the run's image"));
    engine_source_ = new QComboBox(this);
    for (const remote::EngineSource source :
         {remote::EngineSource::kBuild, remote::EngineSource::kImage, remote::EngineSource::kDesktop})
        engine_source_->addItem(QString::fromLatin1(remote::engine_source_name(source)));
    engine_source_->setCurrentText(
        QString::fromLatin1(remote::engine_source_name(remote::engine_source_of(p))));
    engine_source_->setToolTip(
        tr("build: built on the cluster from this app's engine sources, in the run's image or environment, "
           "once per environment; image: the slipway-engine the image or environment carries; desktop: "
           "this computer's engine, uploaded (only for nodes like this computer)"));
    env_setup_ = new QPlainTextEdit(this);
    env_setup_->setPlainText(QString::fromStdString(join_lines(p.env_setup)));
    env_setup_->setPlaceholderText(QStringLiteral("module load pytorch/2.5\nsource ~/venvs/ft/bin/activate"));
    env_setup_->setToolTip(tr("Shell lines every job runs before its steps, one per line"));
    env_setup_->setMaximumHeight(env_setup_->fontMetrics().lineSpacing() * 5);
    partition_ = line(p.default_partition, tr("Used when the run config names no partition"));
    account_ = line(p.default_account, QString());
    qos_ = line(p.default_qos, QString());
    form->addRow(tr("Name"), name_);
    form->addRow(tr("Host"), host_);
    form->addRow(tr("Port"), port_);
    form->addRow(tr("User"), user_);
    form->addRow(tr("Identity file"), identity_);
    form->addRow(tr("Jump host"), jump_);
    form->addRow(tr("Remote folder"), workdir_);
    form->addRow(tr("Containers"), container_);
    form->addRow(tr("Engine"), engine_source_);
    form->addRow(tr("Environment setup"), env_setup_);
    form->addRow(tr("Default partition"), partition_);
    form->addRow(tr("Default account"), account_);
    form->addRow(tr("Default QoS"), qos_);
    error_ = new QLabel(this);
    error_->setStyleSheet(QStringLiteral("color: #c62828;"));
    error_->setWordWrap(true);
    form->addRow(error_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &ProfileDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    form->addRow(buttons);
}

Result<remote::ClusterProfile> ProfileDialog::profile() const {
    remote::ClusterProfile p;
    p.name = name_->text().trimmed().toStdString();
    p.host = host_->text().trimmed().toStdString();
    if (port_->value() > 0) p.port = port_->value();
    p.user = user_->text().trimmed().toStdString();
    p.identity_file = identity_->text().trimmed().toStdString();
    p.proxy_jump = jump_->text().trimmed().toStdString();
    p.remote_workdir = workdir_->text().trimmed().toStdString();
    const Result<remote::ContainerMode> mode =
        remote::parse_container_mode(container_->currentText().toStdString());
    if (!mode.ok()) return mode.status();
    p.container = *mode;
    const Result<remote::EngineSource> source =
        remote::parse_engine_source(engine_source_->currentText().toStdString());
    if (!source.ok()) return source.status();
    p.engine_source = *source;
    for (const QString& line : env_setup_->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        if (!line.trimmed().isEmpty()) p.env_setup.push_back(line.trimmed().toStdString());
    p.default_partition = partition_->text().trimmed().toStdString();
    p.default_account = account_->text().trimmed().toStdString();
    p.default_qos = qos_->text().trimmed().toStdString();
    if (const Status s = remote::validate_profile(p); !s.ok()) return s;
    return p;
}

void ProfileDialog::accept() {
    const Result<remote::ClusterProfile> p = profile();
    if (!p.ok()) {
        error_->setText(QString::fromStdString(p.error()));
        return;
    }
    QDialog::accept();
}

QString host_key_question(const remote::HostKeyInfo& key) {
    return QObject::tr(
               "<p>The authenticity of host <b>%1</b> (port %2) can't be established: its key is not in "
               "%3.</p><p>%4 key fingerprint:<br><code>%5</code></p><p>Compare it with the fingerprint "
               "your cluster's administrators publish before trusting it.</p>")
        .arg(QString::fromStdString(key.host).toHtmlEscaped())
        .arg(key.port)
        .arg(QString::fromStdString(key.known_hosts_file).toHtmlEscaped(),
             QString::fromStdString(key.key_type).toHtmlEscaped(),
             QString::fromStdString(key.sha256_fingerprint).toHtmlEscaped());
}

remote::HostKeyDecision ask_host_key(QWidget* parent, const remote::HostKeyInfo& key) {
    QMessageBox box(QMessageBox::Warning, QObject::tr("Unknown host key"), host_key_question(key),
                    QMessageBox::NoButton, parent);
    box.setTextFormat(Qt::RichText);
    QPushButton* save = box.addButton(QObject::tr("Accept and save"), QMessageBox::AcceptRole);
    QPushButton* once = box.addButton(QObject::tr("Accept once"), QMessageBox::YesRole);
    QPushButton* reject = box.addButton(QObject::tr("Reject"), QMessageBox::RejectRole);
    box.setDefaultButton(reject);
    box.exec();
    if (box.clickedButton() == save) return remote::HostKeyDecision::kAcceptAndSave;
    if (box.clickedButton() == once) return remote::HostKeyDecision::kAcceptOnce;
    return remote::HostKeyDecision::kReject;
}

remote::SessionCallbacks make_gui_callbacks(QWidget* parent) {
    QPointer<QWidget> owner(parent);
    remote::SessionCallbacks c;
    c.unknown_host_key = [owner](const remote::HostKeyInfo& key) {
        return on_gui_thread<remote::HostKeyDecision>([&] { return ask_host_key(owner, key); });
    };
    c.passphrase = [owner](const std::string& key_file) {
        return on_gui_thread<std::optional<std::string>>([&] {
            return ask_secret(owner, QObject::tr("Key passphrase"),
                              QObject::tr("Passphrase for %1 (used once, not stored):")
                                  .arg(QString::fromStdString(key_file)),
                              false);
        });
    };
    c.password = [owner](const std::string& user, const std::string& host) {
        return on_gui_thread<std::optional<std::string>>([&] {
            return ask_secret(owner, QObject::tr("Password"),
                              QObject::tr("Password of %1@%2 (used once, not stored):")
                                  .arg(QString::fromStdString(user), QString::fromStdString(host)),
                              false);
        });
    };
    c.keyboard_interactive = [owner](const std::string& name, const std::string& instruction,
                                     const std::vector<remote::InteractivePrompt>& prompts) {
        return on_gui_thread<std::optional<std::vector<std::string>>>(
            [&]() -> std::optional<std::vector<std::string>> {
                std::vector<std::string> answers;
                for (const remote::InteractivePrompt& p : prompts) {
                    // The server chose these texts: shown with its control characters and escapes removed.
                    QString label = QString::fromStdString(
                        remote::printable_prompt_text(instruction.empty() ? name : instruction));
                    if (!label.isEmpty()) label += QLatin1Char('\n');
                    label += QString::fromStdString(remote::printable_prompt_text(p.text));
                    std::optional<std::string> a =
                        ask_secret(owner, QObject::tr("Sign in (two-factor)"), label, p.echo);
                    if (!a) return std::nullopt;
                    answers.push_back(*a);
                }
                return answers;
            });
    };
    return c;
}

}  // namespace slipway::app
