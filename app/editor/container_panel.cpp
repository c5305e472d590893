// ContainerPanel: the Dockerfile preview, its lint findings and the image build/import buttons.
#include "editor/container_panel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTextBlock>
#include <QVBoxLayout>

#include "remote/container/dockerfile_lint.h"

namespace slipway::app {
namespace {

// The linter's severity words, as remote::lint_severity_name() spells them (no Qt there): listed here so
// that lupdate offers them for the tr() below; translation_test checks that each is translated.
[[maybe_unused]] const char* const kSeverityWords[] = {
    QT_TRANSLATE_NOOP("slipway::app::ContainerPanel", "error"),
    QT_TRANSLATE_NOOP("slipway::app::ContainerPanel", "warning"),
    QT_TRANSLATE_NOOP("slipway::app::ContainerPanel", "info"),
};

QColor severity_color(remote::LintSeverity severity) {
    switch (severity) {
        case remote::LintSeverity::kError:
            return QColor(198, 40, 40);
        case remote::LintSeverity::kWarning:
            return QColor(170, 110, 0);
        case remote::LintSeverity::kInfo:
            return QColor(60, 90, 140);
    }
    return QColor();
}

QString rule_summary(const std::string& id) {
    for (const remote::LintRule& rule : remote::dockerfile_lint_rules()) {
        if (id == rule.id) return QString::fromUtf8(rule.summary);
    }
    return QString();
}

QPlainTextEdit* make_text_view(QWidget* parent) {
    QFont mono(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::Monospace);
    mono.setPointSize(9);
    auto* view = new QPlainTextEdit(parent);
    view->setReadOnly(true);
    view->setLineWrapMode(QPlainTextEdit::NoWrap);
    view->setFont(mono);
    return view;
}

}  // namespace

ContainerPanel::ContainerPanel(QWidget* parent) : QWidget(parent) {
    base_image_ = new QLabel(this);
    base_image_->setWordWrap(true);
    dockerfile_ = make_text_view(this);
    dockerfile_->setMinimumHeight(300);

    findings_summary_ = new QLabel(this);
    findings_summary_->setWordWrap(true);
    findings_ = new QListWidget(this);
    findings_->setWordWrap(true);
    findings_->setMinimumHeight(90);
    findings_->setToolTip(tr("Click a finding to select its line in the Dockerfile"));
    connect(findings_, &QListWidget::itemClicked, this,
            [this](QListWidgetItem* item) { select_line(item->data(Qt::UserRole).toInt()); });

    tag_ = new QLineEdit(this);
    tag_->setToolTip(tr("The image's name:tag (lower case), as docker build -t and enroot import use it"));
    connect(tag_, &QLineEdit::textChanged, this, [this] { refresh_actions(); });
    build_ = new QPushButton(tr("Build image"), this);
    build_->setObjectName(QStringLiteral("build_image"));
    import_ = new QPushButton(tr("Import to .sqsh"), this);
    import_->setObjectName(QStringLiteral("import_image"));
    connect(build_, &QPushButton::clicked, this,
            [this] { emit image_task_requested(ImageAction::kBuild, image_tag()); });
    connect(import_, &QPushButton::clicked, this,
            [this] { emit image_task_requested(ImageAction::kImport, image_tag()); });
    hint_ = new QLabel(this);
    hint_->setWordWrap(true);
    hint_->setStyleSheet(QStringLiteral("color: rgb(110, 110, 110);"));
    result_ = new QLabel(this);
    result_->setWordWrap(true);
    result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    output_ = make_text_view(this);
    output_->setMinimumHeight(110);
    output_->setPlaceholderText(tr("docker build and enroot import output streams here"));
    output_->setMaximumBlockCount(20000);  // a long build keeps its last lines

    // Left: the Dockerfile. Right: what the linter says about it, then the image actions and their output.
    auto* right = new QVBoxLayout;
    right->addWidget(findings_summary_);
    right->addWidget(findings_, 2);
    auto* tag_row = new QHBoxLayout;
    tag_row->addWidget(new QLabel(tr("Image:"), this));
    tag_row->addWidget(tag_, 1);
    right->addLayout(tag_row);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(build_);
    buttons->addWidget(import_);
    buttons->addStretch(1);
    right->addLayout(buttons);
    right->addWidget(hint_);
    right->addWidget(result_);
    right->addWidget(output_, 3);
    auto* columns = new QHBoxLayout;
    auto* left = new QVBoxLayout;
    left->addWidget(new QLabel(tr("<b>Dockerfile</b> (live; what Build image sends)"), this));
    left->addWidget(dockerfile_, 1);
    columns->addLayout(left, 3);
    columns->addLayout(right, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 8, 0, 0);
    layout->addWidget(base_image_);
    layout->addLayout(columns, 1);
    refresh_actions();
}

void ContainerPanel::show_dockerfile(const QString& base_summary, const Result<std::string>& dockerfile) {
    base_image_->setText(base_summary);
    findings_->clear();
    if (!dockerfile.ok()) {
        dockerfile_->setPlainText(tr("# Cannot render the Dockerfile:\n# %1")
                                      .arg(QString::fromStdString(dockerfile.error()).replace('\n', "\n# ")));
        findings_summary_->setText(tr("<b>Linter</b>: nothing to lint"));
        return;
    }
    dockerfile_->setPlainText(QString::fromStdString(*dockerfile));
    // Microseconds for our Dockerfiles (tests/remote/dockerfile_linter_test.cpp): fine on every keystroke.
    const std::vector<remote::LintFinding> found = remote::lint_dockerfile(*dockerfile);
    int counts[3] = {0, 0, 0};
    for (const remote::LintFinding& f : found) {
        ++counts[static_cast<int>(f.severity)];
        auto* item =
            new QListWidgetItem(QStringLiteral("%1  %2  %3: %4")
                                    .arg(tr("line %1").arg(f.line), tr(lint_severity_name(f.severity)),
                                         QString::fromStdString(f.rule), QString::fromStdString(f.message)),
                                findings_);
        item->setData(Qt::UserRole, f.line);
        item->setForeground(severity_color(f.severity));
        item->setToolTip(rule_summary(f.rule));
    }
    findings_summary_->setText(
        found.empty()
            ? tr("<b>Linter</b>: no findings (%1 rules checked)").arg(remote::dockerfile_lint_rules().size())
            : tr("<b>Linter</b>: %1 error(s), %2 warning(s), %3 note(s); click one to see its line")
                  .arg(counts[0])
                  .arg(counts[1])
                  .arg(counts[2]));
}

void ContainerPanel::select_line(int line) {
    const QTextBlock block = dockerfile_->document()->findBlockByNumber(line - 1);
    if (!block.isValid()) return;
    QTextCursor cursor(block);
    cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
    dockerfile_->setTextCursor(cursor);
    dockerfile_->centerCursor();
}

void ContainerPanel::update_actions(const RunConfig& config, bool config_valid,
                                    const std::optional<remote::ClusterProfile>& target) {
    config_ = config;
    config_valid_ = config_valid;
    target_ = target;
    tag_->setPlaceholderText(QString::fromStdString(default_image_tag(config)));
    refresh_actions();
}

void ContainerPanel::refresh_actions() {
    const std::string image = image_tag().toStdString();
    const remote::ClusterProfile* target = target_ ? &*target_ : nullptr;
    for (const auto& [button, action] :
         {std::pair{build_, ImageAction::kBuild}, {import_, ImageAction::kImport}}) {
        const ImageActionState state =
            image_action_state(action, config_, config_valid_, target, image, running_);
        button->setEnabled(state.enabled);
        button->setToolTip(QString::fromStdString(state.reason));
    }
    tag_->setEnabled(!running_);
    // The reasons on screen too, not only in tooltips.
    QStringList why;
    const bool same = build_->toolTip() == import_->toolTip();
    if (!build_->isEnabled() && !import_->isEnabled() && same) {
        if (!running_) why << build_->toolTip();
    } else {
        if (!build_->isEnabled()) why << tr("Build: %1").arg(build_->toolTip());
        if (!import_->isEnabled()) why << tr("Import: %1").arg(import_->toolTip());
    }
    hint_->setText(why.join(QLatin1Char('\n')));
    hint_->setVisible(!why.isEmpty());
}

QString ContainerPanel::image_tag() const {
    const QString typed = tag_->text().trimmed();
    return typed.isEmpty() ? tag_->placeholderText() : typed;
}

void ContainerPanel::set_running(bool running) {
    running_ = running;
    if (running) {
        output_->clear();
        result_->setStyleSheet(QString());
        result_->setText(tr("Running on the cluster..."));
    }
    refresh_actions();
}

void ContainerPanel::append_output(const QStringList& lines) {
    output_->appendPlainText(lines.join(QLatin1Char('\n')));
}

void ContainerPanel::show_result(bool ok, const QString& message) {
    result_->setStyleSheet(ok ? QStringLiteral("color: rgb(46, 125, 50);")
                              : QStringLiteral("color: rgb(198, 40, 40);"));
    result_->setText(message);
}

}  // namespace slipway::app
