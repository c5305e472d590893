// SqliteConnection and SqlStatement over sqlite3_*: statements prepared with sqlite3_prepare_v2 (so a step
// answers with the precise error), finalized by their owner, and errors worded with sqlite3_errmsg.
#include "history/sqlite_connection.h"

#include <sqlite3.h>

#include <cmath>
#include <utility>

namespace slipway::app {
namespace {

Status error_of(sqlite3* db, const std::string& what) {
    return Status::Error(what + ": " + sqlite3_errmsg(db));
}

}  // namespace

SqlValue SqlValue::text_or_null(const std::string& text) {
    return text.empty() ? SqlValue() : SqlValue(text);
}

SqlValue SqlValue::time_or_null(int64_t ms) {
    return ms != 0 ? SqlValue(ms) : SqlValue();
}

SqlValue SqlValue::real_or_null(double v) {
    return std::isnan(v) ? SqlValue() : SqlValue(v);
}

SqlStatement::SqlStatement(SqlStatement&& other) noexcept
    : statement_(std::exchange(other.statement_, nullptr)), what_(std::move(other.what_)) {}

SqlStatement::~SqlStatement() {
    sqlite3_finalize(statement_);  // a no-op on nullptr
}

Status SqlStatement::bind(std::initializer_list<SqlValue> values) {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
    int index = 1;
    for (const SqlValue& v : values) {
        int rc = SQLITE_OK;
        switch (v.type()) {
            case SqlValue::Type::kNull:
                rc = sqlite3_bind_null(statement_, index);
                break;
            case SqlValue::Type::kInteger:
                rc = sqlite3_bind_int64(statement_, index, v.integer());
                break;
            case SqlValue::Type::kReal:
                rc = sqlite3_bind_double(statement_, index, v.real());
                break;
            case SqlValue::Type::kText:
                rc = sqlite3_bind_text(statement_, index, v.text().data(), static_cast<int>(v.text().size()),
                                       SQLITE_TRANSIENT);
                break;
        }
        if (rc != SQLITE_OK) return error_of(sqlite3_db_handle(statement_), what_);
        ++index;
    }
    return Status::Ok();
}

Result<bool> SqlStatement::next() {
    const int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    const Status failed = error_of(sqlite3_db_handle(statement_), what_);
    sqlite3_reset(statement_);  // ends the statement's read of the file: a later ROLLBACK is not blocked
    return failed;
}

Status SqlStatement::run() {
    for (;;) {
        Result<bool> row = next();
        if (!row.ok()) return row.status();
        if (!*row) break;
    }
    sqlite3_reset(statement_);
    return Status::Ok();
}

bool SqlStatement::is_null(int column) const {
    return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

int64_t SqlStatement::integer(int column) const {
    return sqlite3_column_int64(statement_, column);
}

double SqlStatement::real(int column) const {
    return sqlite3_column_double(statement_, column);
}

std::string SqlStatement::text(int column) const {
    const auto* bytes = sqlite3_column_text(statement_, column);
    if (bytes == nullptr) return {};
    return std::string(reinterpret_cast<const char*>(bytes),
                       static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
}

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::open(const std::string& path) {
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    if (rc != SQLITE_OK) {
        const std::string reason = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        sqlite3_close(db);
        return Status::Error(path + ": " + reason);
    }
    sqlite3_extended_result_codes(db, 0);
    return std::unique_ptr<SqliteConnection>(new SqliteConnection(db));
}

SqliteConnection::~SqliteConnection() {
    sqlite3_close_v2(db_);
}

Status SqliteConnection::error(const std::string& what) const {
    return error_of(db_, what);
}

Result<SqlStatement> SqliteConnection::prepare(const std::string& sql, std::string what) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &statement, nullptr) != SQLITE_OK)
        return error(what);
    return SqlStatement(statement, std::move(what));
}

Status SqliteConnection::run(const std::string& sql, std::initializer_list<SqlValue> values,
                             std::string what) {
    Result<SqlStatement> statement = prepare(sql, std::move(what));
    if (!statement.ok()) return statement.status();
    if (Status s = statement->bind(values); !s.ok()) return s;
    return statement->run();
}

Result<std::optional<int64_t>> SqliteConnection::first_integer(const std::string& sql,
                                                               std::initializer_list<SqlValue> values,
                                                               std::string what) {
    Result<SqlStatement> statement = prepare(sql, std::move(what));
    if (!statement.ok()) return statement.status();
    if (Status s = statement->bind(values); !s.ok()) return s;
    Result<bool> row = statement->next();
    if (!row.ok()) return row.status();
    if (!*row) return std::optional<int64_t>();
    return std::optional<int64_t>(statement->integer(0));
}  // the statement is finalized here: its read ends before the caller writes

Result<int64_t> SqliteConnection::integer(const std::string& sql, std::initializer_list<SqlValue> values,
                                          std::string what) {
    const std::string shown = what;
    Result<std::optional<int64_t>> first = first_integer(sql, values, std::move(what));
    if (!first.ok()) return first.status();
    if (!*first) return Status::Error(shown + ": no row");
    return **first;
}

Status SqliteConnection::run_in_transaction(std::initializer_list<const char*> steps,
                                            std::initializer_list<SqlValue> values, const std::string& what) {
    if (Status s = begin(what); !s.ok()) return s;
    for (const char* sql : steps) {
        if (Status s = run(sql, values, what); !s.ok()) {
            rollback();
            return s;
        }
    }
    return commit(what);
}

Status SqliteConnection::begin(const std::string& what) {
    return run("BEGIN", {}, what);
}

Status SqliteConnection::commit(const std::string& what) {
    if (Status s = run("COMMIT", {}, what); !s.ok()) {
        rollback();  // a COMMIT that failed (SQLITE_BUSY, SQLITE_FULL) leaves the transaction open
        return s;
    }
    return Status::Ok();
}

void SqliteConnection::rollback() {
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Status SqliteConnection::set_busy_timeout(int ms) {
    if (sqlite3_busy_timeout(db_, ms) != SQLITE_OK) return error("cannot set the busy timeout");
    return Status::Ok();
}

int64_t SqliteConnection::last_insert_id() const {
    return sqlite3_last_insert_rowid(db_);
}

}  // namespace slipway::app
