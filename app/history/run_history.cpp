// RunHistory over SQLite's C API: two tables, runs and points; one connection per RunHistory object; the
// schema as a list of migration steps; the file's mode set before SQLite writes into it.
#include "history/run_history.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "history/history_writer.h"
#include "remote/slurm/local_files.h"

namespace slipway::app {
namespace {

std::string db_word(RunState state) {
    return std::string(to_db_text(state));
}

// A record's submitted time (remote::utc_timestamp) in milliseconds; 0 when it is not one.
int64_t submitted_ms(const remote::RunRecord& r) {
    const std::optional<std::time_t> t = remote::parse_utc_timestamp(r.submitted);
    return t ? static_cast<int64_t>(*t) * 1000 : 0;
}

// What a migration step's code may use and report.
struct MigrationContext {
    SqliteConnection& db;
    const OpenOptions& options;
    std::vector<std::string>& notes;
    bool imported_legacy_records = false;
};

// Schema 2's data step: every stored state becomes a RunState DB word; the Slurm word or run_stop status
// the old text was goes to slurm_state / state_detail.
Status normalize_states(MigrationContext& ctx) {
    // Read first, then update: no UPDATE runs while a SELECT over the same table is still stepping.
    std::vector<std::pair<int64_t, std::string>> stored;
    {
        Result<SqlStatement> select = ctx.db.prepare("SELECT id, state FROM runs", "cannot read the states");
        if (!select.ok()) return select.status();
        for (;;) {
            Result<bool> row = select->next();
            if (!row.ok()) return row.status();
            if (!*row) break;
            stored.emplace_back(select->integer(0), select->text(1));
        }
    }
    Result<SqlStatement> update =
        ctx.db.prepare("UPDATE runs SET state = ?, slurm_state = ?, state_detail = ? WHERE id = ?",
                       "cannot rewrite a state");
    if (!update.ok()) return update.status();
    for (const auto& [id, text] : stored) {
        const LegacyState old = parse_legacy_text(text);
        if (Status s = update->bind({db_word(old.state), SqlValue::text_or_null(old.slurm_state),
                                     SqlValue::text_or_null(run_stop_detail(old.run_stop_status)), id});
            !s.ok())
            return s;
        if (Status s = update->run(); !s.ok()) return s;
    }
    return Status::Ok();
}

// Schema 3's data step: the CLI's JSON run records become rows. A row the app made for the same job (it
// wrote both) gets the record's run id and folder; any other record becomes a new row. A record that cannot
// be read is named in a note and skipped: a corrupt file must not lock anyone out of the history.
Status import_json_run_records(MigrationContext& ctx) {
    if (ctx.options.legacy_records_dir.empty()) return Status::Ok();
    const remote::RunRecordStore store(ctx.options.legacy_records_dir);
    const remote::RunRecordStore::Scan scan = store.scan();
    // Records that cannot even be listed are not skipped silently: the history stays at its old version
    // (and usable by this Slipway after the fix) until they can be read.
    if (!scan.listing_problem.empty())
        return Status::Error(scan.listing_problem + " (fix the folder's permissions, or move it away)");
    for (const std::string& problem : scan.problems)
        ctx.notes.push_back("not imported: " + problem);
    int imported = 0;
    for (const remote::RunRecord& r : scan.records) {
        const std::string log = r.slurm_log();
        std::optional<int64_t> same_job;  // read to its end before the write below
        {
            Result<SqlStatement> same = ctx.db.prepare(
                "SELECT id FROM runs WHERE cluster = ? AND job_id = ? AND log_path = ? "
                "AND run_id IS NULL ORDER BY id LIMIT 1",
                r.run_id);
            if (!same.ok()) return same.status();
            if (Status s = same->bind({r.cluster, r.job_id, log}); !s.ok()) return s;
            const Result<bool> found = same->next();
            if (!found.ok()) return found.status();
            if (*found) same_job = same->integer(0);
        }
        Status written = Status::Ok();
        if (same_job) {
            written = ctx.db.run("UPDATE runs SET run_id = ?, remote_dir = ?, slurm_cluster = ? WHERE id = ?",
                                 {r.run_id, r.remote_dir, SqlValue::text_or_null(r.slurm_cluster), *same_job},
                                 r.run_id);
        } else {
            const LegacyState old = parse_legacy_text(r.last_state);
            const int64_t submitted = submitted_ms(r);
            written = ctx.db.run(
                "INSERT INTO runs (name, cluster, job_id, state, slurm_state, created_ms, started_ms, "
                "log_path, "
                "log_offset, run_id, remote_dir, slurm_cluster) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)",
                {r.name, r.cluster, r.job_id, db_word(old.state), SqlValue::text_or_null(old.slurm_state),
                 SqlValue::time_or_null(submitted), SqlValue::time_or_null(submitted), log, r.run_id,
                 r.remote_dir, SqlValue::text_or_null(r.slurm_cluster)},
                r.run_id);
        }
        if (!written.ok()) return written;
        ++imported;
    }
    ctx.imported_legacy_records = !scan.records.empty() || !scan.problems.empty();
    if (imported > 0)
        ctx.notes.push_back("imported " + std::to_string(imported) + " run record(s) from " + store.dir());
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

std::string errno_text() {
    return std::strerror(errno);
}

// Creates the missing folders of `path` with mode 0700 and the file itself, empty, with 0600 (whatever the
// umask) before SQLite writes anything; SQLite gives its -wal, -shm and -journal files the database file's
// mode. An existing file, or one of those, that others can read is tightened to 0600, and `notes` says so.
Status make_private(const std::string& path, std::vector<std::string>& notes) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path folder = fs::absolute(fs::path(path), ec).lexically_normal().parent_path();
    std::vector<fs::path> missing;
    for (fs::path f = folder; !fs::exists(f, ec) && f != f.parent_path(); f = f.parent_path())
        missing.push_back(f);
    fs::create_directories(folder, ec);
    if (ec || !fs::is_directory(folder, ec)) return Status::Error("cannot create the folder of " + path);
    for (const fs::path& f : missing) {
        if (::chmod(f.c_str(), kPrivateFolder) != 0)
            return Status::Error("cannot make " + f.string() + " private: " + errno_text());
    }
    if (const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kPrivateFile); fd >= 0) {
        const bool made_private = ::fchmod(fd, kPrivateFile) == 0;
        ::close(fd);
        if (!made_private) return Status::Error("cannot make " + path + " private: " + errno_text());
        return Status::Ok();
    }
    if (errno != EEXIST) return Status::Error("cannot create " + path + ": " + errno_text());
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        const std::string name = path + suffix;
        struct stat st {};
        if (::stat(name.c_str(), &st) != 0 || (st.st_mode & 077) == 0) continue;
        if (::chmod(name.c_str(), kPrivateFile) != 0)
            return Status::Error("cannot make " + name + " private: " + errno_text());
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 0777));
        notes.push_back(name + " could be read by others (mode " + mode + "); it is now 0600");
    }
    return Status::Ok();
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

void apply_meta(const std::string& text, RunMetrics& m) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
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

StoredRun record_from(const SqlStatement& q) {
    StoredRun r;
    r.id = q.integer(0);
    r.name = q.text(1);
    r.cluster = q.text(2);
    r.job_id = q.text(3);
    // Schema 2 wrote DB words; a Slipway of schema 1 still running beside us may write its old texts.
    r.state = from_legacy_text(q.text(4));
    r.created_ms = q.integer(5);  // NULL (not known) reads 0
    r.started_ms = q.integer(6);
    r.finished_ms = q.integer(7);
    r.config_json = q.text(8);
    r.log_path = q.text(9);
    r.log_offset = static_cast<uint64_t>(q.integer(10));
    r.slurm_state = q.text(11);
    r.state_detail = q.text(12);
    r.run_id = q.text(13);
    r.remote_dir = q.text(14);
    r.slurm_cluster = q.text(15);
    const nlohmann::json facts = nlohmann::json::parse(q.text(16), nullptr, false);
    if (facts.is_object() && facts.contains("resumes") && facts["resumes"].is_array())
        r.restarts = static_cast<int>(facts["resumes"].size());
    return r;
}

constexpr const char* kRunColumns =
    "id, name, cluster, job_id, state, created_ms, started_ms, finished_ms, config_json, log_path, "
    "log_offset, slurm_state, state_detail, run_id, remote_dir, slurm_cluster, meta_json";

std::string run_query(const std::string& rest) {
    return std::string("SELECT ") + kRunColumns + " FROM runs " + rest;
}

// Every row `statement` gives, as StoredRun.
Result<std::vector<StoredRun>> all_runs(SqlStatement& statement) {
    std::vector<StoredRun> runs;
    for (;;) {
        Result<bool> row = statement.next();
        if (!row.ok()) return row.status();
        if (!*row) return runs;
        runs.push_back(record_from(statement));
    }
}

// A row number typed as text ("42"); 0 for anything else.
int64_t row_number(const std::string& text) {
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    return ec == std::errc() && end == text.data() + text.size() ? n : 0;
}

std::string run_words(const char* what, int64_t run_id) {
    return std::string(what) + " " + std::to_string(run_id);
}

}  // namespace

std::string RunHistory::default_path() {
    return remote::slipway_data_dir() + "/history.sqlite";  // $XDG_DATA_HOME (~/.local/share)/slipway
}

int RunHistory::schema_version() {
    return static_cast<int>(kMigrations.size());
}

RunHistory::RunHistory(std::unique_ptr<SqliteConnection> db, std::string path)
    : db_(std::move(db)), path_(std::move(path)) {}

RunHistory::~RunHistory() {
    writer_.reset();  // its last flush needs the connection
}

Result<std::unique_ptr<RunHistory>> RunHistory::open_default() {
    OpenOptions options;
    options.legacy_records_dir = remote::default_runs_dir();
    return open(default_path(), options);
}

Result<std::unique_ptr<RunHistory>> RunHistory::open(const std::string& path, const OpenOptions& options) {
    std::vector<std::string> notes;
    if (Status s = make_private(path, notes); !s.ok()) return s;
    Result<std::unique_ptr<SqliteConnection>> db = SqliteConnection::open(path);
    if (!db.ok()) return Status::Error("cannot open run history " + db.error());
    std::unique_ptr<RunHistory> history(new RunHistory(std::move(*db), path));
    if (Status s = history->set_busy_timeout(kBusyTimeoutMs); !s.ok()) return s;
    if (Status s = history->migrate(options, notes); !s.ok()) return s;
    for (const char* sql : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"}) {
        if (Status s = history->db_->run(sql, {}, std::string("run history: ") + sql); !s.ok()) return s;
    }
    for (const std::string& note : notes)
        std::cerr << "slipway: " << note << "\n";
    history->open_notes_ = std::move(notes);
    history->writer_ = std::make_unique<HistoryWriter>(history.get());
    return Result<std::unique_ptr<RunHistory>>(std::move(history));
}

Status RunHistory::migrate(const OpenOptions& options, std::vector<std::string>& notes) {
    bool imported = false;  // the legacy folder is renamed only after the import's COMMIT
    const int latest = schema_version();
    auto rollback_and = [this](const Status& s) {
        db_->rollback();
        return s;
    };
    for (;;) {
        // Under the write lock, so two Slipways opening one old file migrate it once.
        if (Status s = db_->run("BEGIN IMMEDIATE", {}, "cannot migrate run history " + path_); !s.ok())
            return s;
        const Result<int64_t> stored =
            db_->integer("PRAGMA user_version", {}, "cannot read the schema version of " + path_);
        if (!stored.ok()) return rollback_and(stored.status());
        const int version = static_cast<int>(*stored);
        if (version > latest) {
            // Never downgraded: a newer Slipway's columns or meaning may be lost.
            return rollback_and(
                Status::Error("run history " + path_ + " has schema version " + std::to_string(version) +
                              ", newer than this Slipway's " + std::to_string(latest) +
                              ": open it with the newer Slipway, or move the file away to start a "
                              "new history (it was not changed)"));
        }
        if (version == latest) {
            db_->rollback();  // nothing was written
            if (imported) {
                const std::string& from = options.legacy_records_dir;
                const std::string to = from + ".imported";
                std::error_code ec;
                // rename(2) would replace an empty folder of that name: an earlier import's stays.
                const bool taken = std::filesystem::exists(to, ec);
                if (!taken) std::filesystem::rename(from, to, ec);
                notes.push_back(!taken && !ec
                                    ? from + " renamed " + to + " (its records are in " + path_ + " now)"
                                    : from + " could not be renamed " + to + "; its records are in " + path_ +
                                          " and will not be imported again");
            }
            return Status::Ok();
        }
        const MigrationStep& step = kMigrations[static_cast<size_t>(version)];
        const std::string failed = "cannot migrate run history " + path_ + " from schema version " +
                                   std::to_string(version) + " to " + std::to_string(version + 1);
        for (const char* sql : step.sql) {
            if (Status s = db_->run(sql, {}, failed); !s.ok()) return rollback_and(s);
        }
        MigrationContext ctx{*db_, options, notes};
        if (step.code != nullptr) {
            if (Status s = step.code(ctx); !s.ok())
                return rollback_and(Status::Error(failed + ": " + s.message()));
        }
        const std::string recording = "cannot record the schema version of " + path_;
        if (Status s = db_->run("PRAGMA user_version = " + std::to_string(version + 1), {}, recording);
            !s.ok())
            return rollback_and(s);
        if (Status s = db_->commit(recording); !s.ok()) return s;
        imported = imported || ctx.imported_legacy_records;
    }
}

Status RunHistory::set_busy_timeout(int ms) {
    return db_->set_busy_timeout(ms);
}

Result<int64_t> RunHistory::pragma(const std::string& sql) {
    return db_->integer(sql, {}, "run history: " + sql);
}

Result<int64_t> RunHistory::add_run(const StoredRun& run) {
    const Status s = db_->run(
        "INSERT INTO runs (name, cluster, job_id, state, created_ms, started_ms, finished_ms, config_json, "
        "log_path, log_offset, slurm_state, state_detail, run_id, remote_dir, slurm_cluster) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        {run.name, run.cluster, run.job_id, db_word(run.state),
         SqlValue::time_or_null(run.created_ms != 0 ? run.created_ms : now_ms()),
         SqlValue::time_or_null(run.started_ms), SqlValue::time_or_null(run.finished_ms), run.config_json,
         run.log_path, static_cast<int64_t>(run.log_offset), SqlValue::text_or_null(run.slurm_state),
         SqlValue::text_or_null(run.state_detail), SqlValue::text_or_null(run.run_id),
         SqlValue::text_or_null(run.remote_dir), SqlValue::text_or_null(run.slurm_cluster)},
        "cannot add run to history");
    if (!s.ok()) return s;
    return db_->last_insert_id();
}

Status RunHistory::update_run(const StoredRun& run) {
    return db_->run(
        "UPDATE runs SET name = ?, cluster = ?, job_id = ?, state = ?, created_ms = ?, started_ms = ?, "
        "finished_ms = ?, config_json = ?, log_path = ?, slurm_state = ?, state_detail = ?, run_id = ?, "
        "remote_dir = ?, slurm_cluster = ? WHERE id = ?",
        {run.name, run.cluster, run.job_id, db_word(run.state), SqlValue::time_or_null(run.created_ms),
         SqlValue::time_or_null(run.started_ms), SqlValue::time_or_null(run.finished_ms), run.config_json,
         run.log_path, SqlValue::text_or_null(run.slurm_state), SqlValue::text_or_null(run.state_detail),
         SqlValue::text_or_null(run.run_id), SqlValue::text_or_null(run.remote_dir),
         SqlValue::text_or_null(run.slurm_cluster), run.id},
        run_words("cannot update run", run.id));
}

Status RunHistory::set_state(int64_t run_id, RunState state, const std::string& detail,
                             const std::string& slurm_state, int64_t finished_ms, StateWrite mode) {
    std::string guard;
    if (mode == StateWrite::kIfNotEnded) {
        std::string kept;  // the states this write must not replace
        for (RunState s : kAllRunStates) {
            if (is_terminal(s) || (s == RunState::kStalled && state == RunState::kRunning))
                kept += (kept.empty() ? "'" : ", '") + db_word(s) + "'";
        }
        guard = " AND state NOT IN (" + kept + ")";
    }
    return db_->run(
        "UPDATE runs SET state = ?, state_detail = ?, slurm_state = COALESCE(?, slurm_state), "
        "finished_ms = COALESCE(?, finished_ms) WHERE id = ?" +
            guard,
        {db_word(state), SqlValue::text_or_null(detail), SqlValue::text_or_null(slurm_state),
         SqlValue::time_or_null(finished_ms), run_id},
        run_words("cannot set state of run", run_id));
}

Status RunHistory::remove_run(int64_t run_id) {
    writer_->discard(run_id);
    return db_->run_in_transaction({"DELETE FROM points WHERE run_id = ?", "DELETE FROM runs WHERE id = ?"},
                                   {run_id}, run_words("cannot remove run", run_id));
}

Result<int64_t> RunHistory::record_submission(const remote::RunRecord& r, const std::string& run_json) {
    const Result<std::optional<int64_t>> found = db_->first_integer(
        "SELECT id FROM runs WHERE run_id = ?", {r.run_id}, "cannot look up run " + r.run_id);
    if (!found.ok()) return found.status();
    if (*found) {
        // A row still "submitting" is queued now; one a faster poller already moved on keeps its state.
        const Status s = db_->run(
            "UPDATE runs SET job_id = ?, remote_dir = ?, slurm_cluster = ?, log_path = ?, "
            "config_json = COALESCE(?, config_json), state = CASE WHEN state = ? THEN ? ELSE state END "
            "WHERE id = ?",
            {r.job_id, r.remote_dir, SqlValue::text_or_null(r.slurm_cluster), r.slurm_log(),
             SqlValue::text_or_null(run_json), db_word(RunState::kSubmitting), db_word(RunState::kPending),
             **found},
            "cannot record run " + r.run_id);
        if (!s.ok()) return s;
        return **found;
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

Result<int64_t> RunHistory::find_run(const std::string& run_id_or_id) const {
    // A row number (all digits) only names rows without a run id, the ones `status` lists by number: a
    // Slurm job id typed by habit must not pick some other run.
    const Result<std::optional<int64_t>> id = db_->first_integer(
        "SELECT id FROM runs WHERE run_id = ? UNION ALL SELECT id FROM runs WHERE id = ? "
        "AND run_id IS NULL AND ? <> '' AND ? NOT GLOB '*[^0-9]*' LIMIT 1",
        {run_id_or_id, row_number(run_id_or_id), run_id_or_id, run_id_or_id},
        "cannot look up run " + run_id_or_id);
    if (!id.ok()) return id.status();
    if (!*id) return Status::Error(StatusCode::kNotFound, "no run " + run_id_or_id + " in " + path_);
    return **id;
}

Result<std::vector<StoredRun>> RunHistory::cluster_runs() const {
    Result<SqlStatement> q =
        db_->prepare(run_query("WHERE (COALESCE(job_id, '') <> '' OR run_id IS NOT NULL) "
                               "AND cluster NOT IN (?, ?) ORDER BY created_ms, id"),
                     "cannot list the cluster runs");
    if (!q.ok()) return q.status();
    if (Status s = q->bind({kLocalCluster, kOpenedLogCluster}); !s.ok()) return s;
    return all_runs(*q);
}

Result<int64_t> RunHistory::data_version() const {
    return db_->integer("PRAGMA data_version", {}, "cannot read the data version of " + path_);
}

Result<int64_t> RunHistory::find_opened_log(const std::string& path) const {
    return find_log_run(kOpenedLogCluster, path);
}

Result<int64_t> RunHistory::find_log_run(const std::string& cluster, const std::string& path) const {
    // Without a job id: a submitted run's log on the same cluster is that run's, not an opened one.
    const Result<std::optional<int64_t>> id = db_->first_integer(
        "SELECT id FROM runs WHERE cluster = ? AND log_path = ? AND COALESCE(job_id, '') = '' ORDER BY id "
        "LIMIT 1",
        {cluster, path}, "cannot look up " + path);
    if (!id.ok()) return id.status();
    return id->value_or(0);
}

Result<int64_t> RunHistory::record_remote_log(const std::string& profile, const std::string& path,
                                              const std::string& name) {
    const Result<int64_t> existing = find_log_run(profile, path);
    if (!existing.ok()) return existing;
    if (*existing != 0) {
        if (Status s = set_state(*existing, RunState::kFollowing); !s.ok()) return s;
        return existing;
    }
    StoredRun record;
    record.name = name;
    record.cluster = profile;
    record.state = RunState::kFollowing;
    record.log_path = path;
    return add_run(record);
}

Result<int64_t> RunHistory::record_opened_log(const std::string& path, const std::string& name) {
    const Result<int64_t> existing = find_opened_log(path);
    if (!existing.ok()) return existing;
    if (*existing == 0) {
        StoredRun record;
        record.name = name;
        record.cluster = kOpenedLogCluster;
        record.state = RunState::kReading;
        record.log_path = path;
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
    if (Status s = db_->begin("cannot start a transaction"); !s.ok()) return s;
    auto rollback_and = [this](const Status& s) {
        db_->rollback();
        return s;
    };
    {
        Result<SqlStatement> insert = db_->prepare(
            "INSERT INTO points (run_id, metric, samples, step, time_ms, value) VALUES (?, ?, ?, ?, ?, ?)",
            run_words("cannot store points of run", run_id));
        if (!insert.ok()) return rollback_and(insert.status());
        for (const auto& [metric, p] : points) {
            Status s =
                insert->bind({run_id, static_cast<int>(metric), SqlValue::real_or_null(p.samples),
                              SqlValue::real_or_null(p.step), static_cast<int64_t>(p.time_ms), p.value});
            if (s.ok()) s = insert->run();
            if (!s.ok()) return rollback_and(s);
        }
    }
    if (Status s = db_->run("UPDATE runs SET log_offset = ?, meta_json = ? WHERE id = ?",
                            {static_cast<int64_t>(log_offset), facts.encoded, run_id},
                            run_words("cannot store offset of run", run_id));
        !s.ok())
        return rollback_and(s);
    return db_->commit(run_words("cannot commit points of run", run_id));
}

Status RunHistory::reset_points(int64_t run_id) {
    writer_->discard(run_id);
    return reset_stored_points(run_id);
}

Status RunHistory::reset_stored_points(int64_t run_id) {
    return db_->run_in_transaction({"DELETE FROM points WHERE run_id = ?",
                                    "UPDATE runs SET log_offset = 0, meta_json = NULL WHERE id = ?"},
                                   {run_id}, run_words("cannot reset points of run", run_id));
}

Result<std::vector<StoredRun>> RunHistory::runs() const {
    Result<SqlStatement> q = db_->prepare(run_query("ORDER BY id DESC"), "cannot list runs");
    if (!q.ok()) return q.status();
    return all_runs(*q);
}

Result<StoredRun> RunHistory::run(int64_t run_id) const {
    Result<SqlStatement> q = db_->prepare(run_query("WHERE id = ?"), run_words("cannot read run", run_id));
    if (!q.ok()) return q.status();
    if (Status s = q->bind({run_id}); !s.ok()) return s;
    Result<std::vector<StoredRun>> rows = all_runs(*q);
    if (!rows.ok()) return rows.status();
    if (rows->empty())
        return Result<StoredRun>::Error("no run " + std::to_string(run_id) + " in the history");
    return std::move(rows->front());
}

Result<RunMetrics> RunHistory::load_metrics(int64_t run_id) const {
    RunMetrics metrics;
    {
        Result<SqlStatement> meta =
            db_->prepare("SELECT meta_json FROM runs WHERE id = ?", run_words("cannot read run", run_id));
        if (!meta.ok()) return meta.status();
        if (Status s = meta->bind({run_id}); !s.ok()) return s;
        const Result<bool> row = meta->next();
        if (!row.ok()) return row.status();
        if (!*row) return Result<RunMetrics>::Error("no run " + std::to_string(run_id) + " in the history");
        apply_meta(meta->text(0), metrics);
    }
    // Stepped row by row: runs can hold millions of points.
    Result<SqlStatement> q = db_->prepare(
        "SELECT metric, samples, step, time_ms, value FROM points WHERE run_id = ? ORDER BY rowid",
        run_words("cannot read points of run", run_id));
    if (!q.ok()) return q.status();
    if (Status s = q->bind({run_id}); !s.ok()) return s;
    for (;;) {
        const Result<bool> row = q->next();
        if (!row.ok()) return row.status();
        if (!*row) break;
        const int64_t metric = q->integer(0);
        if (metric < 0 || metric >= kMetricCount) continue;
        MetricSample s;
        s.samples = q->is_null(1) ? kUnknown : q->real(1);
        s.step = q->is_null(2) ? kUnknown : q->real(2);
        s.time_ms = q->integer(3);
        s.value = q->real(4);
        metrics.series[static_cast<size_t>(metric)].push_back(s);
    }
    return Result<RunMetrics>(std::move(metrics));
}

Result<int64_t> RunHistory::point_count(int64_t run_id) const {
    return db_->integer("SELECT COUNT(*) FROM points WHERE run_id = ?", {run_id}, "cannot count points");
}

Result<std::vector<double>> RunHistory::sampled_values(int64_t run_id, Metric metric, int max_points) const {
    const Result<int64_t> n = db_->integer("SELECT COUNT(*) FROM points WHERE run_id = ? AND metric = ?",
                                           {run_id, static_cast<int>(metric)}, "cannot count points");
    if (!n.ok()) return n.status();
    std::vector<double> values;
    if (*n == 0 || max_points <= 0) return values;
    const int64_t stride = std::max<int64_t>(1, (*n + max_points - 1) / max_points);
    // Every stride-th point by its place in the run (ROW_NUMBER over insertion order), and the last one.
    Result<SqlStatement> q = db_->prepare(
        "SELECT value FROM (SELECT value, ROW_NUMBER() OVER (ORDER BY rowid) - 1 AS i FROM points "
        "WHERE run_id = ? AND metric = ?) WHERE i % ? = 0 OR i = ? ORDER BY i",
        run_words("cannot read the points of run", run_id));
    if (!q.ok()) return q.status();
    if (Status s = q->bind({run_id, static_cast<int>(metric), stride, *n - 1}); !s.ok()) return s;
    for (;;) {
        const Result<bool> row = q->next();
        if (!row.ok()) return row.status();
        if (!*row) return values;
        values.push_back(q->real(0));
    }
}

}  // namespace slipway::app
