// RunHistory on QSQLITE: two tables, runs and points; one connection per RunHistory object; the schema
// as a list of migration steps; the file's mode set before SQLite writes into it.
#include "history/run_history.h"

#include <QAtomicInteger>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QVariant>
#include <QtDebug>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "history/history_writer.h"

namespace slipway::app {
namespace {

QAtomicInteger<int> g_connection_counter;

QString db_word(RunState state) {
    return QString::fromUtf8(to_db_text(state).data(), static_cast<qsizetype>(to_db_text(state).size()));
}

// Empty text is stored as NULL.
QVariant text_or_null(const QString& text) {
    return text.isEmpty() ? QVariant() : QVariant(text);
}

// An unknown time (0) is stored as NULL.
QVariant time_value(int64_t ms) {
    return ms != 0 ? QVariant(static_cast<qint64>(ms)) : QVariant();
}

int64_t time_from(const QVariant& v) {
    return v.isNull() ? 0 : static_cast<int64_t>(v.toLongLong());
}

QString text(const std::string& s) {
    return QString::fromStdString(s);
}

// A record's submitted time (remote::utc_timestamp) in milliseconds; 0 when it is not one.
int64_t submitted_ms(const remote::RunRecord& r) {
    const QDateTime t = QDateTime::fromString(QString::fromStdString(r.submitted), Qt::ISODate);
    return t.isValid() ? t.toMSecsSinceEpoch() : 0;
}

// What a migration step's code may use and report.
struct MigrationContext {
    QSqlDatabase db;
    const OpenOptions& options;
    QStringList& notes;
    bool imported_legacy_records = false;
};

// Schema 2's data step: every stored state becomes a RunState DB word; the Slurm word or run_stop status
// the old text was goes to slurm_state / state_detail.
Status normalize_states(MigrationContext& ctx) {
    QSqlDatabase db = ctx.db;
    QSqlQuery select(db);
    if (!select.exec(QStringLiteral("SELECT id, state FROM runs")))
        return Status::Error(select.lastError().text().toStdString());
    // Read first, then update: no UPDATE runs while a SELECT over the same table is still stepping.
    std::vector<std::pair<QVariant, QString>> stored;
    while (select.next())
        stored.emplace_back(select.value(0), select.value(1).toString());
    select.finish();
    QSqlQuery update(db);
    update.prepare(
        QStringLiteral("UPDATE runs SET state = ?, slurm_state = ?, state_detail = ? WHERE id = ?"));
    for (const auto& [id, text] : stored) {
        const LegacyState old = parse_legacy_text(text.toStdString());
        update.addBindValue(db_word(old.state));
        update.addBindValue(text_or_null(QString::fromStdString(old.slurm_state)));
        update.addBindValue(text_or_null(QString::fromStdString(run_stop_detail(old.run_stop_status))));
        update.addBindValue(id);
        if (!update.exec()) return Status::Error(update.lastError().text().toStdString());
    }
    return Status::Ok();
}

// Schema 3's data step: the CLI's JSON run records become rows. A row the app made for the same job (it
// wrote both) gets the record's run id and folder; any other record becomes a new row. A record that cannot
// be read is named in a note and skipped: a corrupt file must not lock anyone out of the history.
Status import_json_run_records(MigrationContext& ctx) {
    if (ctx.options.legacy_records_dir.isEmpty()) return Status::Ok();
    const remote::RunRecordStore store(QFile::encodeName(ctx.options.legacy_records_dir).toStdString());
    const remote::RunRecordStore::Scan scan = store.scan();
    // Records that cannot even be listed are not skipped silently: the history stays at its old version
    // (and usable by this Slipway after the fix) until they can be read.
    if (!scan.listing_problem.empty())
        return Status::Error(scan.listing_problem + " (fix the folder's permissions, or move it away)");
    for (const std::string& problem : scan.problems)
        ctx.notes << QStringLiteral("not imported: %1").arg(QString::fromStdString(problem));
    int imported = 0;
    for (const remote::RunRecord& r : scan.records) {
        const QString log = QString::fromStdString(r.slurm_log());
        QSqlQuery same(ctx.db);
        same.prepare(
            QStringLiteral("SELECT id FROM runs WHERE cluster = ? AND job_id = ? AND log_path = ? "
                           "AND run_id IS NULL ORDER BY id LIMIT 1"));
        same.addBindValue(QString::fromStdString(r.cluster));
        same.addBindValue(QString::fromStdString(r.job_id));
        same.addBindValue(log);
        if (!same.exec()) return Status::Error(same.lastError().text().toStdString());
        const QVariant existing = same.next() ? same.value(0) : QVariant();
        same.finish();
        QSqlQuery write(ctx.db);
        if (existing.isValid()) {
            write.prepare(
                QStringLiteral("UPDATE runs SET run_id = ?, remote_dir = ?, slurm_cluster = ? WHERE id = ?"));
            write.addBindValue(QString::fromStdString(r.run_id));
            write.addBindValue(QString::fromStdString(r.remote_dir));
            write.addBindValue(text_or_null(QString::fromStdString(r.slurm_cluster)));
            write.addBindValue(existing);
        } else {
            const LegacyState old = parse_legacy_text(r.last_state);
            const int64_t submitted = submitted_ms(r);
            write.prepare(
                QStringLiteral("INSERT INTO runs (name, cluster, job_id, state, slurm_state, created_ms, "
                               "started_ms, log_path, "
                               "log_offset, run_id, remote_dir, slurm_cluster) VALUES (?, ?, ?, ?, ?, ?, ?, "
                               "?, 0, ?, ?, ?)"));
            write.addBindValue(QString::fromStdString(r.name));
            write.addBindValue(QString::fromStdString(r.cluster));
            write.addBindValue(QString::fromStdString(r.job_id));
            write.addBindValue(db_word(old.state));
            write.addBindValue(text_or_null(QString::fromStdString(old.slurm_state)));
            write.addBindValue(time_value(submitted));
            write.addBindValue(time_value(submitted));
            write.addBindValue(log);
            write.addBindValue(QString::fromStdString(r.run_id));
            write.addBindValue(QString::fromStdString(r.remote_dir));
            write.addBindValue(text_or_null(QString::fromStdString(r.slurm_cluster)));
        }
        if (!write.exec()) return Status::Error(r.run_id + ": " + write.lastError().text().toStdString());
        ++imported;
    }
    ctx.imported_legacy_records = !scan.records.empty() || !scan.problems.empty();
    if (imported > 0)
        ctx.notes
            << QStringLiteral("imported %1 run record(s) from %2").arg(imported).arg(store.dir().c_str());
    return Status::Ok();
}

// One schema step: its SQL, then code for what data SQL alone cannot move, in the same transaction.
struct MigrationStep {
    std::vector<const char*> sql;
    Status (*code)(MigrationContext& ctx) = nullptr;
};

// The schema, one step per version: kMigrations[i] takes a file at version i to i + 1, in one
// transaction. Version 0 is a file written before versions were recorded: it has step 1's tables already
// (IF NOT EXISTS keeps them and their rows), or nothing.
const std::vector<MigrationStep> kMigrations = {
    {{
        "CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, "
        "cluster TEXT, job_id TEXT, state TEXT, created_ms INTEGER, started_ms INTEGER, "
        "finished_ms INTEGER, config_json TEXT, log_path TEXT, log_offset INTEGER NOT NULL DEFAULT 0, "
        "meta_json TEXT)",
        "CREATE TABLE IF NOT EXISTS points (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, "
        "metric INTEGER NOT NULL, samples REAL, step REAL, time_ms INTEGER, value REAL NOT NULL)",
        "CREATE INDEX IF NOT EXISTS points_by_run ON points(run_id, metric)",
    }},
    // 2: typed states (RunState's DB words), Slurm's own word kept apart.
    {{"ALTER TABLE runs ADD COLUMN slurm_state TEXT", "ALTER TABLE runs ADD COLUMN state_detail TEXT"},
     &normalize_states},
    // 3: one store for the CLI and the app: Slipway's run id and where the run lives on the cluster; the
    // CLI's JSON records imported.
    {{"ALTER TABLE runs ADD COLUMN run_id TEXT", "ALTER TABLE runs ADD COLUMN remote_dir TEXT",
      "ALTER TABLE runs ADD COLUMN slurm_cluster TEXT",
      "CREATE UNIQUE INDEX runs_by_run_id ON runs(run_id) WHERE run_id IS NOT NULL",
      "CREATE INDEX runs_by_job ON runs(cluster, job_id)"},
     &import_json_run_records},
};

constexpr mode_t kPrivateFile = 0600;
constexpr mode_t kPrivateFolder = 0700;

QString errno_text() {
    return QString::fromLocal8Bit(std::strerror(errno));
}

// Creates the missing folders of `path` with mode 0700 and the file itself, empty, with 0600 (whatever the
// umask) before SQLite writes anything; SQLite gives its -wal, -shm and -journal files the database file's
// mode. An existing file, or one of those, that others can read is tightened to 0600, and `notes` says so.
Status make_private(const QString& path, QStringList& notes) {
    const QString folder = QFileInfo(path).absolutePath();
    QStringList missing;
    for (QString f = folder; !QFileInfo::exists(f); f = QFileInfo(f).absolutePath())
        missing.push_back(f);
    if (!QDir().mkpath(folder)) return Status::Error("cannot create the folder of " + path.toStdString());
    for (const QString& f : missing) {
        if (::chmod(QFile::encodeName(f).constData(), kPrivateFolder) != 0)
            return Status::Error(("cannot make " + f + " private: " + errno_text()).toStdString());
    }
    const QByteArray file = QFile::encodeName(path);
    if (const int fd = ::open(file.constData(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kPrivateFile);
        fd >= 0) {
        const bool made_private = ::fchmod(fd, kPrivateFile) == 0;
        ::close(fd);
        if (!made_private)
            return Status::Error(("cannot make " + path + " private: " + errno_text()).toStdString());
        return Status::Ok();
    }
    if (errno != EEXIST) return Status::Error(("cannot create " + path + ": " + errno_text()).toStdString());
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        const QByteArray name = file + suffix;
        struct stat st {};
        if (::stat(name.constData(), &st) != 0 || (st.st_mode & 077) == 0) continue;
        const QString shown = QFile::decodeName(name);
        if (::chmod(name.constData(), kPrivateFile) != 0)
            return Status::Error(("cannot make " + shown + " private: " + errno_text()).toStdString());
        notes << QStringLiteral("%1 could be read by others (mode %2); it is now 0600")
                     .arg(shown)
                     .arg(st.st_mode & 0777, 4, 8, QLatin1Char('0'));
    }
    return Status::Ok();
}

// SQLite's own reason ("database is locked", "database or disk is full") when there is one: Qt's
// driver text after it ("Unable to fetch row") says nothing more.
Status sql_error(const QString& what, const QSqlError& error) {
    const QString reason = error.databaseText().isEmpty() ? error.text() : error.databaseText();
    return Status::Error((what + ": " + reason).toStdString());
}

QVariant real_value(double v) {
    return std::isnan(v) ? QVariant() : QVariant(v);
}

}  // namespace

RunFacts RunFacts::of(const RunMetrics& m) {
    nlohmann::json j = nlohmann::json::object();
    auto put = [&j](const char* key, const auto& opt) {
        if (opt) j[key] = *opt;
    };
    put("run_start_ms", m.run_start_ms);
    put("first_time_ms", m.first_time_ms);
    put("last_time_ms", m.last_time_ms);
    put("run_stop_ms", m.run_stop_ms);
    put("status", m.status);
    put("global_batch_size", m.global_batch_size);
    put("total_steps", m.total_steps);
    put("last_step", m.last_step);
    put("target", m.target);
    j["target_higher_is_better"] = m.target_higher_is_better;
    j["benchmark"] = m.benchmark;
    j["eval_meaning"] = static_cast<int>(m.eval_meaning);
    if (!m.resumes.empty()) {  // a restarted job's segments: [step, samples, time_ms] each
        nlohmann::json resumes = nlohmann::json::array();
        for (const MetricSample& r : m.resumes)
            resumes.push_back(
                {r.step, std::isnan(r.samples) ? nlohmann::json() : nlohmann::json(r.samples), r.time_ms});
        j["resumes"] = std::move(resumes);
    }
    return RunFacts{j.dump()};
}

namespace {

void apply_meta(const QString& text, RunMetrics& m) {
    const nlohmann::json j = nlohmann::json::parse(text.toStdString(), nullptr, false);
    if (!j.is_object()) return;
    auto get_i = [&j](const char* key, std::optional<int64_t>& out) {
        if (j.contains(key) && j[key].is_number()) out = j[key].get<int64_t>();
    };
    auto get_d = [&j](const char* key, std::optional<double>& out) {
        if (j.contains(key) && j[key].is_number()) out = j[key].get<double>();
    };
    get_i("run_start_ms", m.run_start_ms);
    get_i("first_time_ms", m.first_time_ms);
    get_i("last_time_ms", m.last_time_ms);
    get_i("run_stop_ms", m.run_stop_ms);
    if (j.contains("status") && j["status"].is_string()) m.status = j["status"].get<std::string>();
    get_d("global_batch_size", m.global_batch_size);
    get_d("total_steps", m.total_steps);
    get_d("last_step", m.last_step);
    get_d("target", m.target);
    m.target_higher_is_better = j.value("target_higher_is_better", false);
    m.benchmark = j.value("benchmark", std::string());
    const int meaning = j.value("eval_meaning", 0);
    if (meaning >= 0 && meaning <= static_cast<int>(EvalMeaning::kTokenAccuracy))
        m.eval_meaning = static_cast<EvalMeaning>(meaning);
    m.resumes.clear();
    for (const nlohmann::json& r : j.value("resumes", nlohmann::json::array())) {
        if (!r.is_array() || r.size() != 3 || !r[0].is_number() || !r[2].is_number()) continue;
        MetricSample resume;
        resume.step = resume.value = r[0].get<double>();
        resume.samples = r[1].is_number() ? r[1].get<double>() : kUnknown;
        resume.time_ms = r[2].get<int64_t>();
        m.resumes.push_back(resume);
    }
}

StoredRun record_from(const QSqlQuery& q) {
    StoredRun r;
    r.id = q.value(0).toLongLong();
    r.name = q.value(1).toString().toStdString();
    r.cluster = q.value(2).toString().toStdString();
    r.job_id = q.value(3).toString().toStdString();
    // Schema 2 wrote DB words; a Slipway of schema 1 still running beside us may write its old texts.
    r.state = from_legacy_text(q.value(4).toString().toStdString());
    r.created_ms = time_from(q.value(5));
    r.started_ms = time_from(q.value(6));
    r.finished_ms = time_from(q.value(7));
    r.config_json = q.value(8).toString().toStdString();
    r.log_path = q.value(9).toString().toStdString();
    r.log_offset = static_cast<uint64_t>(q.value(10).toLongLong());
    r.slurm_state = q.value(11).toString().toStdString();
    r.state_detail = q.value(12).toString().toStdString();
    r.run_id = q.value(13).toString().toStdString();
    r.remote_dir = q.value(14).toString().toStdString();
    r.slurm_cluster = q.value(15).toString().toStdString();
    const nlohmann::json facts = nlohmann::json::parse(q.value(16).toString().toStdString(), nullptr, false);
    if (facts.is_object() && facts.contains("resumes") && facts["resumes"].is_array())
        r.restarts = static_cast<int>(facts["resumes"].size());
    return r;
}

constexpr const char* kRunColumns =
    "id, name, cluster, job_id, state, created_ms, started_ms, finished_ms, config_json, log_path, "
    "log_offset, slurm_state, state_detail, run_id, remote_dir, slurm_cluster, meta_json";

// Runs statements that each take the run id as their one parameter, all or nothing.
Status per_run_transaction(QSqlDatabase db, int64_t run_id, std::initializer_list<const char*> statements,
                           const QString& what) {
    if (!db.transaction()) return sql_error(QStringLiteral("cannot start a transaction"), db.lastError());
    for (const char* sql : statements) {
        QSqlQuery q(db);
        q.prepare(QString::fromUtf8(sql));
        q.addBindValue(static_cast<qint64>(run_id));
        if (!q.exec()) {
            const Status s = sql_error(what, q.lastError());
            db.rollback();
            return s;
        }
    }
    if (!db.commit()) return sql_error(what, db.lastError());
    return Status::Ok();
}

}  // namespace

QString RunHistory::default_path() {
    // GenericDataLocation is $XDG_DATA_HOME (~/.local/share); our folder is named after the app.
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) +
           QStringLiteral("/slipway/history.sqlite");
}

int RunHistory::schema_version() {
    return static_cast<int>(kMigrations.size());
}

RunHistory::RunHistory(QString connection, QString path)
    : connection_(std::move(connection)), path_(std::move(path)) {}

RunHistory::~RunHistory() {
    writer_.reset();  // its last flush needs the connection
    {
        QSqlDatabase db = QSqlDatabase::database(connection_, false);
        if (db.isValid()) db.close();
    }
    QSqlDatabase::removeDatabase(connection_);
}

Result<std::unique_ptr<RunHistory>> RunHistory::open_default() {
    OpenOptions options;
    options.legacy_records_dir = QFile::decodeName(remote::default_runs_dir().c_str());
    return open(default_path(), options);
}

Result<std::unique_ptr<RunHistory>> RunHistory::open(const QString& path, const OpenOptions& options) {
    QStringList notes;
    if (Status s = make_private(path, notes); !s.ok()) return s;
    const QString connection =
        QStringLiteral("slipway_history_%1").arg(g_connection_counter.fetchAndAddRelaxed(1));
    std::unique_ptr<RunHistory> history(new RunHistory(connection, path));
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
        db.setDatabaseName(path);
        if (!db.open()) return sql_error("cannot open run history " + path, db.lastError());
    }
    if (Status s = history->set_busy_timeout(kBusyTimeoutMs); !s.ok()) return s;
    if (Status s = history->migrate(options, notes); !s.ok()) return s;
    for (const char* sql : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"}) {
        if (Status s = history->exec(QString::fromLatin1(sql)); !s.ok()) return s;
    }
    for (const QString& note : notes)
        qWarning().noquote() << "slipway:" << note;
    history->open_notes_ = std::move(notes);
    history->writer_ = std::make_unique<HistoryWriter>(history.get());
    return Result<std::unique_ptr<RunHistory>>(std::move(history));
}

Status RunHistory::migrate(const OpenOptions& options, QStringList& notes) {
    QSqlDatabase db = QSqlDatabase::database(connection_);
    bool imported = false;  // the legacy folder is renamed only after the import's COMMIT
    const std::string file = path_.toStdString();
    const int latest = schema_version();
    QSqlQuery q(db);
    for (;;) {
        // Under the write lock, so two Slipways opening one old file migrate it once.
        if (!q.exec(QStringLiteral("BEGIN IMMEDIATE")))
            return sql_error("cannot migrate run history " + path_, q.lastError());
        auto rollback_and = [&](const Status& s) {
            QSqlQuery(db).exec(QStringLiteral("ROLLBACK"));
            return s;
        };
        if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next())
            return rollback_and(sql_error("cannot read the schema version of " + path_, q.lastError()));
        const int version = q.value(0).toInt();
        q.finish();
        if (version > latest) {
            // Never downgraded: a newer Slipway's columns or meaning may be lost.
            return rollback_and(
                Status::Error("run history " + file + " has schema version " + std::to_string(version) +
                              ", newer than this Slipway's " + std::to_string(latest) +
                              ": open it with the newer Slipway, or move the file away to start a "
                              "new history (it was not changed)"));
        }
        if (version == latest) {
            rollback_and(Status::Ok());  // nothing was written
            if (imported) {
                const QString from = options.legacy_records_dir;
                const QString to = from + QStringLiteral(".imported");
                notes
                    << (QDir().rename(from, to)
                            ? QStringLiteral("%1 renamed %2 (its records are in %3 now)").arg(from, to, path_)
                            : QStringLiteral("%1 could not be renamed %2; its records are in %3 and will not "
                                             "be imported again")
                                  .arg(from, to, path_));
            }
            return Status::Ok();
        }
        const MigrationStep& step = kMigrations[static_cast<size_t>(version)];
        const QString failed = QStringLiteral("cannot migrate run history %1 from schema version %2 to %3")
                                   .arg(path_)
                                   .arg(version)
                                   .arg(version + 1);
        for (const char* sql : step.sql) {
            if (!q.exec(QString::fromLatin1(sql))) return rollback_and(sql_error(failed, q.lastError()));
        }
        MigrationContext ctx{db, options, notes};
        if (step.code != nullptr) {
            if (Status s = step.code(ctx); !s.ok())
                return rollback_and(Status::Error(failed.toStdString() + ": " + s.message()));
        }
        if (!q.exec(QStringLiteral("PRAGMA user_version = %1").arg(version + 1)) ||
            !q.exec(QStringLiteral("COMMIT"))) {
            return rollback_and(sql_error("cannot record the schema version of " + path_, q.lastError()));
        }
        imported = imported || ctx.imported_legacy_records;
    }
}

Status RunHistory::set_busy_timeout(int ms) {
    return exec(QStringLiteral("PRAGMA busy_timeout = %1").arg(ms));
}

Status RunHistory::exec(const QString& sql) const {
    QSqlQuery q(QSqlDatabase::database(connection_));
    if (!q.exec(sql)) return sql_error(QStringLiteral("run history: ") + sql, q.lastError());
    return Status::Ok();
}

Result<int64_t> RunHistory::add_run(const StoredRun& run) {
    QSqlQuery q(QSqlDatabase::database(connection_));
    q.prepare(QStringLiteral(
        "INSERT INTO runs (name, cluster, job_id, state, created_ms, started_ms, finished_ms, config_json, "
        "log_path, log_offset, slurm_state, state_detail, run_id, remote_dir, slurm_cluster) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(text(run.name));
    q.addBindValue(text(run.cluster));
    q.addBindValue(text(run.job_id));
    q.addBindValue(db_word(run.state));
    q.addBindValue(time_value(run.created_ms != 0 ? run.created_ms : now_ms()));
    q.addBindValue(time_value(run.started_ms));
    q.addBindValue(time_value(run.finished_ms));
    q.addBindValue(text(run.config_json));
    q.addBindValue(text(run.log_path));
    q.addBindValue(static_cast<qint64>(run.log_offset));
    q.addBindValue(text_or_null(text(run.slurm_state)));
    q.addBindValue(text_or_null(text(run.state_detail)));
    q.addBindValue(text_or_null(text(run.run_id)));
    q.addBindValue(text_or_null(text(run.remote_dir)));
    q.addBindValue(text_or_null(text(run.slurm_cluster)));
    if (!q.exec()) return sql_error(QStringLiteral("cannot add run to history"), q.lastError());
    return static_cast<int64_t>(q.lastInsertId().toLongLong());
}

Status RunHistory::update_run(const StoredRun& run) {
    QSqlQuery q(QSqlDatabase::database(connection_));
    q.prepare(QStringLiteral(
        "UPDATE runs SET name = ?, cluster = ?, job_id = ?, state = ?, created_ms = ?, started_ms = ?, "
        "finished_ms = ?, config_json = ?, log_path = ?, slurm_state = ?, state_detail = ?, run_id = ?, "
        "remote_dir = ?, slurm_cluster = ? WHERE id = ?"));
    q.addBindValue(text(run.name));
    q.addBindValue(text(run.cluster));
    q.addBindValue(text(run.job_id));
    q.addBindValue(db_word(run.state));
    q.addBindValue(time_value(run.created_ms));
    q.addBindValue(time_value(run.started_ms));
    q.addBindValue(time_value(run.finished_ms));
    q.addBindValue(text(run.config_json));
    q.addBindValue(text(run.log_path));
    q.addBindValue(text_or_null(text(run.slurm_state)));
    q.addBindValue(text_or_null(text(run.state_detail)));
    q.addBindValue(text_or_null(text(run.run_id)));
    q.addBindValue(text_or_null(text(run.remote_dir)));
    q.addBindValue(text_or_null(text(run.slurm_cluster)));
    q.addBindValue(static_cast<qint64>(run.id));
    if (!q.exec()) return sql_error(QStringLiteral("cannot update run %1").arg(run.id), q.lastError());
    return Status::Ok();
}

Status RunHistory::set_state(int64_t run_id, RunState state, const QString& detail,
                             const QString& slurm_state, int64_t finished_ms, StateWrite mode) {
    QString guard;
    if (mode == StateWrite::kIfNotEnded) {
        QStringList kept;  // the states this write must not replace
        for (RunState s : kAllRunStates) {
            if (is_terminal(s) || (s == RunState::kStalled && state == RunState::kRunning))
                kept << QStringLiteral("'%1'").arg(db_word(s));
        }
        guard = QStringLiteral(" AND state NOT IN (%1)").arg(kept.join(QStringLiteral(", ")));
    }
    QSqlQuery q(QSqlDatabase::database(connection_));
    q.prepare(
        QStringLiteral("UPDATE runs SET state = ?, state_detail = ?, slurm_state = COALESCE(?, slurm_state), "
                       "finished_ms = COALESCE(?, finished_ms) WHERE id = ?") +
        guard);
    q.addBindValue(db_word(state));
    q.addBindValue(text_or_null(detail));
    q.addBindValue(text_or_null(slurm_state));
    q.addBindValue(time_value(finished_ms));
    q.addBindValue(static_cast<qint64>(run_id));
    if (!q.exec()) return sql_error(QStringLiteral("cannot set state of run %1").arg(run_id), q.lastError());
    return Status::Ok();
}

Status RunHistory::remove_run(int64_t run_id) {
    writer_->discard(run_id);
    return per_run_transaction(QSqlDatabase::database(connection_), run_id,
                               {"DELETE FROM points WHERE run_id = ?", "DELETE FROM runs WHERE id = ?"},
                               QStringLiteral("cannot remove run %1").arg(run_id));
}

Result<int64_t> RunHistory::record_submission(const remote::RunRecord& r, const std::string& run_json) {
    QSqlDatabase db = QSqlDatabase::database(connection_);
    const QString run_id = QString::fromStdString(r.run_id);
    const QString log = QString::fromStdString(r.slurm_log());
    QSqlQuery find(db);
    find.prepare(QStringLiteral("SELECT id FROM runs WHERE run_id = ?"));
    find.addBindValue(run_id);
    if (!find.exec()) return sql_error(QStringLiteral("cannot look up run ") + run_id, find.lastError());
    if (find.next()) {
        const int64_t id = find.value(0).toLongLong();
        find.finish();
        QSqlQuery q(db);
        // A row still "submitting" is queued now; one a faster poller already moved on keeps its state.
        q.prepare(
            QStringLiteral("UPDATE runs SET job_id = ?, remote_dir = ?, slurm_cluster = ?, log_path = ?, "
                           "config_json = COALESCE(?, config_json), "
                           "state = CASE WHEN state = ? THEN ? ELSE state END WHERE id = ?"));
        q.addBindValue(QString::fromStdString(r.job_id));
        q.addBindValue(QString::fromStdString(r.remote_dir));
        q.addBindValue(text_or_null(QString::fromStdString(r.slurm_cluster)));
        q.addBindValue(log);
        q.addBindValue(text_or_null(QString::fromStdString(run_json)));
        q.addBindValue(db_word(RunState::kSubmitting));
        q.addBindValue(db_word(RunState::kPending));
        q.addBindValue(static_cast<qint64>(id));
        if (!q.exec()) return sql_error(QStringLiteral("cannot record run ") + run_id, q.lastError());
        return id;
    }
    StoredRun record;
    record.name = r.name;
    record.cluster = r.cluster;
    record.job_id = r.job_id;
    record.state = RunState::kPending;
    record.created_ms = record.started_ms = submitted_ms(r);
    record.log_path = r.slurm_log();
    record.run_id = r.run_id;
    record.remote_dir = r.remote_dir;
    record.slurm_cluster = r.slurm_cluster;
    record.config_json = run_json;
    return add_run(record);
}

Result<int64_t> RunHistory::find_run(const QString& run_id_or_id) const {
    QSqlQuery q(QSqlDatabase::database(connection_));
    // A row number (all digits) only names rows without a run id, the ones `status` lists by number: a
    // Slurm job id typed by habit must not pick some other run.
    q.prepare(
        QStringLiteral("SELECT id FROM runs WHERE run_id = ? UNION ALL SELECT id FROM runs WHERE id = ? "
                       "AND run_id IS NULL AND ? <> '' AND ? NOT GLOB '*[^0-9]*' LIMIT 1"));
    q.addBindValue(run_id_or_id);
    q.addBindValue(run_id_or_id.toLongLong());
    q.addBindValue(run_id_or_id);
    q.addBindValue(run_id_or_id);
    if (!q.exec()) return sql_error(QStringLiteral("cannot look up run ") + run_id_or_id, q.lastError());
    if (!q.next()) {
        return Status::Error(StatusCode::kNotFound,
                             "no run " + run_id_or_id.toStdString() + " in " + path_.toStdString());
    }
    return static_cast<int64_t>(q.value(0).toLongLong());
}

Result<std::vector<StoredRun>> RunHistory::cluster_runs() const {
    QSqlQuery q(QSqlDatabase::database(connection_));
    q.prepare(QStringLiteral("SELECT %1 FROM runs WHERE (COALESCE(job_id, '') <> '' OR run_id IS NOT NULL) "
                             "AND cluster NOT IN (?, ?) "
                             "ORDER BY created_ms, id")
                  .arg(QLatin1String(kRunColumns)));
    q.addBindValue(kLocalProfile);
    q.addBindValue(kOpenedLogSource);
    if (!q.exec()) return sql_error(QStringLiteral("cannot list the cluster runs"), q.lastError());
    std::vector<StoredRun> runs;
    while (q.next())
        runs.push_back(record_from(q));
    return runs;
}

Result<int64_t> RunHistory::data_version() const {
    QSqlQuery q(QSqlDatabase::database(connection_));
    if (!q.exec(QStringLiteral("PRAGMA data_version")) || !q.next())
        return sql_error(QStringLiteral("cannot read the data version of ") + path_, q.lastError());
    return static_cast<int64_t>(q.value(0).toLongLong());
}

Result<int64_t> RunHistory::find_opened_log(const QString& path) const {
    return find_log_run(kOpenedLogSource, path);
}

Result<int64_t> RunHistory::find_log_run(const QString& cluster, const QString& path) const {
    QSqlQuery q(QSqlDatabase::database(connection_));
    // Without a job id: a submitted run's log on the same cluster is that run's, not an opened one.
    q.prepare(
        QStringLiteral("SELECT id FROM runs WHERE cluster = ? AND log_path = ? AND COALESCE(job_id, '') = '' "
                       "ORDER BY id LIMIT 1"));
    q.addBindValue(cluster);
    q.addBindValue(path);
    if (!q.exec()) return sql_error(QStringLiteral("cannot look up ") + path, q.lastError());
    return q.next() ? static_cast<int64_t>(q.value(0).toLongLong()) : int64_t{0};
}

Result<int64_t> RunHistory::record_remote_log(const QString& profile, const QString& path,
                                              const QString& name) {
    const Result<int64_t> existing = find_log_run(profile, path);
    if (!existing.ok()) return existing;
    if (*existing != 0) {
        if (Status s = set_state(*existing, RunState::kFollowing); !s.ok()) return s;
        return existing;
    }
    StoredRun record;
    record.name = name.toStdString();
    record.cluster = profile.toStdString();
    record.state = RunState::kFollowing;
    record.log_path = path.toStdString();
    return add_run(record);
}

Result<int64_t> RunHistory::record_opened_log(const QString& path, const QString& name) {
    const Result<int64_t> existing = find_opened_log(path);
    if (!existing.ok()) return existing;
    if (*existing == 0) {
        StoredRun record;
        record.name = name.toStdString();
        record.cluster = kOpenedLogCluster;
        record.state = RunState::kReading;
        record.log_path = path.toStdString();
        return add_run(record);
    }
    if (Status s = reset_points(*existing); !s.ok()) return s;
    if (Status s = set_state(*existing, RunState::kReading); !s.ok()) return s;
    return existing;
}

Status RunHistory::finish_opened_log(int64_t run_id, const RunMetrics& metrics) {
    Result<StoredRun> record = run(run_id);
    if (!record.ok()) return record.status();
    record->state = from_run_stop(metrics);
    record->state_detail = run_stop_detail(metrics.status.value_or(""));
    const std::optional<int64_t> start = metrics.run_start_ms ? metrics.run_start_ms : metrics.first_time_ms;
    record->started_ms = start.value_or(0);
    record->finished_ms = metrics.run_stop_ms.value_or(0);
    return update_run(*record);
}

Status RunHistory::append(int64_t run_id, const std::vector<MetricPointRow>& points,
                          const RunMetrics& metrics, uint64_t log_offset) {
    return append(run_id, points, RunFacts::of(metrics), log_offset);
}

Status RunHistory::append(int64_t run_id, const std::vector<MetricPointRow>& points, const RunFacts& facts,
                          uint64_t log_offset) {
    QSqlDatabase db = QSqlDatabase::database(connection_);
    if (!db.transaction()) return sql_error(QStringLiteral("cannot start a transaction"), db.lastError());
    QSqlQuery insert(db);
    insert.prepare(
        QStringLiteral("INSERT INTO points (run_id, metric, samples, step, time_ms, value) "
                       "VALUES (?, ?, ?, ?, ?, ?)"));
    for (const auto& [metric, p] : points) {
        insert.bindValue(0, static_cast<qint64>(run_id));
        insert.bindValue(1, static_cast<int>(metric));
        insert.bindValue(2, real_value(p.samples));
        insert.bindValue(3, real_value(p.step));
        insert.bindValue(4, static_cast<qint64>(p.time_ms));
        insert.bindValue(5, p.value);
        if (!insert.exec()) {
            const Status s =
                sql_error(QStringLiteral("cannot store points of run %1").arg(run_id), insert.lastError());
            db.rollback();
            return s;
        }
    }
    QSqlQuery update(db);
    update.prepare(QStringLiteral("UPDATE runs SET log_offset = ?, meta_json = ? WHERE id = ?"));
    update.addBindValue(static_cast<qint64>(log_offset));
    update.addBindValue(QString::fromStdString(facts.encoded));
    update.addBindValue(static_cast<qint64>(run_id));
    if (!update.exec()) {
        const Status s =
            sql_error(QStringLiteral("cannot store offset of run %1").arg(run_id), update.lastError());
        db.rollback();
        return s;
    }
    if (!db.commit())
        return sql_error(QStringLiteral("cannot commit points of run %1").arg(run_id), db.lastError());
    return Status::Ok();
}

Status RunHistory::reset_points(int64_t run_id) {
    writer_->discard(run_id);
    return reset_stored_points(run_id);
}

Status RunHistory::reset_stored_points(int64_t run_id) {
    return per_run_transaction(QSqlDatabase::database(connection_), run_id,
                               {"DELETE FROM points WHERE run_id = ?",
                                "UPDATE runs SET log_offset = 0, meta_json = NULL WHERE id = ?"},
                               QStringLiteral("cannot reset points of run %1").arg(run_id));
}

Result<std::vector<StoredRun>> RunHistory::runs() const {
    QSqlQuery q(QSqlDatabase::database(connection_));
    if (!q.exec(QStringLiteral("SELECT %1 FROM runs ORDER BY id DESC").arg(QLatin1String(kRunColumns)))) {
        return sql_error(QStringLiteral("cannot list runs"), q.lastError());
    }
    std::vector<StoredRun> out;
    while (q.next())
        out.push_back(record_from(q));
    return out;
}

Result<StoredRun> RunHistory::run(int64_t run_id) const {
    QSqlQuery q(QSqlDatabase::database(connection_));
    q.prepare(QStringLiteral("SELECT %1 FROM runs WHERE id = ?").arg(QLatin1String(kRunColumns)));
    q.addBindValue(static_cast<qint64>(run_id));
    if (!q.exec()) return sql_error(QStringLiteral("cannot read run %1").arg(run_id), q.lastError());
    if (!q.next()) return Result<StoredRun>::Error("no run " + std::to_string(run_id) + " in the history");
    return record_from(q);
}

Result<RunMetrics> RunHistory::load_metrics(int64_t run_id) const {
    RunMetrics metrics;
    QSqlDatabase db = QSqlDatabase::database(connection_);
    QSqlQuery meta(db);
    meta.prepare(QStringLiteral("SELECT meta_json FROM runs WHERE id = ?"));
    meta.addBindValue(static_cast<qint64>(run_id));
    if (!meta.exec()) return sql_error(QStringLiteral("cannot read run %1").arg(run_id), meta.lastError());
    if (!meta.next())
        return Result<RunMetrics>::Error("no run " + std::to_string(run_id) + " in the history");
    apply_meta(meta.value(0).toString(), metrics);

    QSqlQuery q(db);
    q.setForwardOnly(true);  // no client-side copy of the result set: runs can hold millions of points
    q.prepare(
        QStringLiteral("SELECT metric, samples, step, time_ms, value FROM points WHERE run_id = ? "
                       "ORDER BY rowid"));
    q.addBindValue(static_cast<qint64>(run_id));
    if (!q.exec())
        return sql_error(QStringLiteral("cannot read points of run %1").arg(run_id), q.lastError());
    while (q.next()) {
        const int metric = q.value(0).toInt();
        if (metric < 0 || metric >= kMetricCount) continue;
        MetricSample s;
        s.samples = q.value(1).isNull() ? kUnknown : q.value(1).toDouble();
        s.step = q.value(2).isNull() ? kUnknown : q.value(2).toDouble();
        s.time_ms = q.value(3).toLongLong();
        s.value = q.value(4).toDouble();
        metrics.series[static_cast<size_t>(metric)].push_back(s);
    }
    return Result<RunMetrics>(std::move(metrics));
}

Result<int64_t> RunHistory::point_count(int64_t run_id) const {
    QSqlQuery q(QSqlDatabase::database(connection_));
    q.prepare(QStringLiteral("SELECT COUNT(*) FROM points WHERE run_id = ?"));
    q.addBindValue(static_cast<qint64>(run_id));
    if (!q.exec() || !q.next()) return sql_error(QStringLiteral("cannot count points"), q.lastError());
    return static_cast<int64_t>(q.value(0).toLongLong());
}

Result<std::vector<double>> RunHistory::sampled_values(int64_t run_id, Metric metric, int max_points) const {
    QSqlDatabase db = QSqlDatabase::database(connection_);
    QSqlQuery count(db);
    count.prepare(QStringLiteral("SELECT COUNT(*) FROM points WHERE run_id = ? AND metric = ?"));
    count.addBindValue(static_cast<qint64>(run_id));
    count.addBindValue(static_cast<int>(metric));
    if (!count.exec() || !count.next())
        return sql_error(QStringLiteral("cannot count points"), count.lastError());
    const qint64 n = count.value(0).toLongLong();
    count.finish();
    std::vector<double> values;
    if (n == 0 || max_points <= 0) return values;
    const qint64 stride = std::max<qint64>(1, (n + max_points - 1) / max_points);
    // Every stride-th point by its place in the run (ROW_NUMBER over insertion order), and the last one.
    QSqlQuery q(db);
    q.prepare(QStringLiteral(
        "SELECT value FROM (SELECT value, ROW_NUMBER() OVER (ORDER BY rowid) - 1 AS i FROM points "
        "WHERE run_id = ? AND metric = ?) WHERE i % ? = 0 OR i = ? ORDER BY i"));
    q.addBindValue(static_cast<qint64>(run_id));
    q.addBindValue(static_cast<int>(metric));
    q.addBindValue(stride);
    q.addBindValue(n - 1);
    if (!q.exec())
        return sql_error(QStringLiteral("cannot read the points of run %1").arg(run_id), q.lastError());
    while (q.next())
        values.push_back(q.value(0).toDouble());
    return values;
}

}  // namespace slipway::app
