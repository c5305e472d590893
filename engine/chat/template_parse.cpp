// Chat templates, part 1: the lexer and parser. Splits the source into text and tags with Jinja2's
// whitespace rules as transformers configures them (trim_blocks, lstrip_blocks, "-" and "+" signs, one
// trailing newline dropped), then parses tags into the nodes of template_ast.h.
#include <algorithm>
#include <cctype>
#include <set>

#include "chat/chat_template.h"
#include "chat/template_ast.h"
#include "contract/utf8.h"

namespace slipway::chat {
namespace {

struct Token {
    enum class Type { kName, kString, kInteger, kFloat, kOperator, kEnd };
    Type type = Type::kEnd;
    std::string text;  // name, operator, or the unescaped string
    nlohmann::json number;
    Where where;
};

// A piece of the source: plain text, a {{ }} output, or a {% %} statement (comments are dropped).
struct Piece {
    enum class Kind { kText, kOutput, kStatement };
    Kind kind = Kind::kText;
    std::string text;
    std::vector<Token> tokens;  // ends with kEnd
    Where where;
};

struct ParseError {
    Where where;
    std::string message;
};

std::string where_text(Where w) {
    return "line " + std::to_string(w.line) + " column " + std::to_string(w.column);
}

class Lexer {
public:
    explicit Lexer(std::string source) : src_(std::move(source)) {
        line_starts_.push_back(0);
        for (size_t i = 0; i < src_.size(); ++i)
            if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }

    Where where(size_t offset) const {
        auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
        const size_t line = static_cast<size_t>(it - line_starts_.begin());
        return Where{static_cast<int>(line), static_cast<int>(offset - line_starts_[line - 1] + 1)};
    }

    std::vector<Piece> run() {
        std::vector<Piece> pieces;
        size_t pos = 0;
        bool line_starting = true;
        while (true) {
            size_t at = pos;
            while (at < src_.size()) {
                at = src_.find('{', at);
                if (at == std::string::npos || at + 1 >= src_.size()) {
                    at = std::string::npos;
                    break;
                }
                const char c = src_[at + 1];
                if (c == '{' || c == '%' || c == '#') break;
                ++at;
            }
            if (at >= src_.size()) at = std::string::npos;
            std::string text = src_.substr(pos, at == std::string::npos ? std::string::npos : at - pos);
            if (at == std::string::npos) {
                push_text(pieces, std::move(text), pos);
                break;
            }
            const char open = src_[at + 1];
            const char sign = at + 2 < src_.size() ? src_[at + 2] : '\0';
            if (sign == '-') {
                size_t end = text.size();
                while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1])))
                    --end;
                text.resize(end);
            } else if (sign != '+' && open != '{') {
                // lstrip_blocks: only spaces/tabs between the line start and a block or comment tag.
                const size_t l_pos = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
                if ((l_pos > 0 || line_starting) && text.find_first_not_of(" \t", l_pos) == std::string::npos)
                    text.resize(l_pos);
            }
            push_text(pieces, std::move(text), pos);
            size_t p = at + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
            char end_sign = '\0';
            if (open == '#') {
                const size_t end = src_.find("#}", p);
                if (end == std::string::npos)
                    throw ParseError{where(at), "comment is not closed (missing #})"};
                end_sign = end > p && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : '\0';
                pos = end + 2;
            } else {
                Piece piece;
                piece.kind = open == '{' ? Piece::Kind::kOutput : Piece::Kind::kStatement;
                piece.where = where(at);
                p = tokenize_tag(p, open == '{' ? '}' : '%', piece.tokens, end_sign, at);
                pieces.push_back(std::move(piece));
                pos = p;
            }
            // What follows the tag: "-" strips all whitespace; trim_blocks drops one newline after %} and #}.
            line_starting = false;
            if (end_sign == '-') {
                size_t q = pos;
                while (q < src_.size() && std::isspace(static_cast<unsigned char>(src_[q])))
                    ++q;
                line_starting = q > pos && src_[q - 1] == '\n';
                pos = q;
            } else if (open != '{' && end_sign != '+' && pos < src_.size() && src_[pos] == '\n') {
                ++pos;
                line_starting = true;
            }
        }
        return pieces;
    }

private:
    void push_text(std::vector<Piece>& pieces, std::string text, size_t offset) const {
        if (text.empty()) return;
        Piece piece;
        piece.kind = Piece::Kind::kText;
        piece.text = std::move(text);
        piece.where = where(offset);
        pieces.push_back(std::move(piece));
    }

    // Reads tokens from p up to the closing "}}" / "%}" (outside brackets); returns the offset after it.
    size_t tokenize_tag(size_t p, char close, std::vector<Token>& out, char& end_sign, size_t tag_start) {
        int depth = 0;
        while (true) {
            while (p < src_.size() && std::isspace(static_cast<unsigned char>(src_[p])))
                ++p;
            if (p >= src_.size())
                throw ParseError{where(tag_start), std::string("tag is not closed (missing ") + close + "})"};
            const auto starts = [&](std::string_view s) { return src_.compare(p, s.size(), s) == 0; };
            if (depth == 0) {
                for (const char sign : {'-', '+'}) {
                    if (src_[p] == sign && p + 2 < src_.size() && src_[p + 1] == close &&
                        src_[p + 2] == '}') {
                        end_sign = sign;
                        out.push_back(Token{Token::Type::kEnd, "", nullptr, where(p)});
                        return p + 3;
                    }
                }
                if (src_[p] == close && p + 1 < src_.size() && src_[p + 1] == '}') {
                    out.push_back(Token{Token::Type::kEnd, "", nullptr, where(p)});
                    return p + 2;
                }
            }
            Token token;
            token.where = where(p);
            const char c = src_[p];
            if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
                size_t q = p;
                while (q < src_.size() &&
                       (std::isalnum(static_cast<unsigned char>(src_[q])) || src_[q] == '_'))
                    ++q;
                token.type = Token::Type::kName;
                token.text = src_.substr(p, q - p);
                p = q;
            } else if (std::isdigit(static_cast<unsigned char>(c))) {
                size_t q = p;
                while (q < src_.size() &&
                       (std::isdigit(static_cast<unsigned char>(src_[q])) || src_[q] == '_'))
                    ++q;
                bool is_float = false;
                if (q + 1 < src_.size() && src_[q] == '.' &&
                    std::isdigit(static_cast<unsigned char>(src_[q + 1]))) {
                    is_float = true;
                    ++q;
                    while (q < src_.size() && std::isdigit(static_cast<unsigned char>(src_[q])))
                        ++q;
                }
                std::string digits = src_.substr(p, q - p);
                digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
                token.type = is_float ? Token::Type::kFloat : Token::Type::kInteger;
                token.number =
                    is_float ? nlohmann::json(std::stod(digits)) : nlohmann::json(std::stoll(digits));
                p = q;
            } else if (c == '\'' || c == '"') {
                token.type = Token::Type::kString;
                p = read_string(p, token.text);
            } else {
                static const char* const kOperators[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*",
                                                         "/",  "%",  "~",  "<",  ">",  "=",  "(", ")", "[",
                                                         "]",  "{",  "}",  ".",  ",",  ":",  "|"};
                std::string op;
                for (const char* candidate : kOperators)
                    if (starts(candidate)) {
                        op = candidate;
                        break;
                    }
                if (op.empty())
                    throw ParseError{token.where, std::string("unexpected character '") + c + "'"};
                if (op == "(" || op == "[" || op == "{") ++depth;
                if (op == ")" || op == "]" || op == "}") --depth;
                token.type = Token::Type::kOperator;
                token.text = op;
                p += op.size();
            }
            out.push_back(std::move(token));
        }
    }

    // Reads a quoted string at p with Python's escapes; returns the offset after the closing quote.
    size_t read_string(size_t p, std::string& out) const {
        const char quote = src_[p];
        const size_t start = p++;
        while (p < src_.size() && src_[p] != quote) {
            if (src_[p] != '\\' || p + 1 >= src_.size()) {
                out += src_[p++];
                continue;
            }
            const char e = src_[p + 1];
            p += 2;
            switch (e) {
                case 'n':
                    out += '\n';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '\'':
                    out += '\'';
                    break;
                case '"':
                    out += '"';
                    break;
                case 'a':
                    out += '\a';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'v':
                    out += '\v';
                    break;
                case '0':
                    out += '\0';
                    break;
                case '\n':
                    break;
                case 'x':
                case 'u':
                case 'U': {
                    const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    if (p + n > src_.size())
                        throw ParseError{where(p), "truncated \\" + std::string(1, e) + " escape"};
                    append_utf8(out, static_cast<char32_t>(std::stoul(src_.substr(p, n), nullptr, 16)));
                    p += n;
                    break;
                }
                default:
                    out += '\\';
                    out += e;
            }
        }
        if (p >= src_.size()) throw ParseError{where(start), "string is not closed"};
        return p + 1;
    }

    std::string src_;
    std::vector<size_t> line_starts_;
};

// Recursive descent over the pieces, with Jinja2's operator precedence (jinja2/parser.py): conditional <
// or < and < not < comparisons < + - < ~ < * / // % < ** < unary - + < postfix, filters and tests.
class Parser {
public:
    explicit Parser(std::vector<Piece> pieces) : pieces_(std::move(pieces)) {}

    NodePtr parse_root() {
        auto root = std::make_shared<TemplateNode>();
        root->kind = TemplateNode::Kind::kBlock;
        std::string end;
        root->body = parse_body({}, end);
        return root;
    }

private:
    // Parses nodes until a statement whose first name is in `ends` (returned in `end`, its tokens left
    // current).
    NodeList parse_body(const std::set<std::string>& ends, std::string& end) {
        NodeList nodes;
        while (index_ < pieces_.size()) {
            Piece& piece = pieces_[index_];
            if (piece.kind == Piece::Kind::kText) {
                auto node = std::make_shared<TemplateNode>();
                node->kind = TemplateNode::Kind::kText;
                node->text = piece.text;
                node->where = piece.where;
                nodes.push_back(node);
                ++index_;
                continue;
            }
            tokens_ = &piece.tokens;
            cursor_ = 0;
            if (piece.kind == Piece::Kind::kOutput) {
                auto node = std::make_shared<TemplateNode>();
                node->kind = TemplateNode::Kind::kOutput;
                node->where = piece.where;
                node->expr = parse_expression();
                expect_end();
                nodes.push_back(node);
                ++index_;
                continue;
            }
            const Token& keyword = peek();
            if (keyword.type != Token::Type::kName)
                throw ParseError{keyword.where, "expected a statement name"};
            if (ends.count(keyword.text)) {
                end = keyword.text;
                return nodes;
            }
            nodes.push_back(parse_statement());
        }
        if (!ends.empty()) {
            std::string expected;
            for (const auto& e : ends)
                expected += (expected.empty() ? "" : " or ") + e;
            throw ParseError{pieces_.empty() ? Where{} : pieces_.back().where,
                             "unexpected end of template, expected " + expected};
        }
        return nodes;
    }

    NodePtr parse_statement() {
        const Nesting guard(depth_, peek().where);
        const Token keyword = next();
        auto node = std::make_shared<TemplateNode>();
        node->where = keyword.where;
        const std::string& k = keyword.text;
        if (k == "if") {
            node->kind = TemplateNode::Kind::kIf;
            ExprPtr condition = parse_expression();
            expect_end();
            ++index_;
            while (true) {
                std::string end;
                NodeList body = parse_body({"elif", "else", "endif"}, end);
                node->branches.emplace_back(condition, std::move(body));
                next();
                if (end == "elif") {
                    condition = parse_expression();
                    expect_end();
                    ++index_;
                    continue;
                }
                expect_end();
                ++index_;
                if (end == "else") {
                    node->else_body = parse_body({"endif"}, end);
                    next();
                    expect_end();
                    ++index_;
                }
                break;
            }
        } else if (k == "for") {
            node->kind = TemplateNode::Kind::kFor;
            do {
                node->targets.push_back(expect_name("a loop variable"));
            } while (accept_operator(","));
            if (next().text != "in") throw ParseError{previous().where, "expected 'in' in for loop"};
            node->expr = parse_expression(/*allow_condition=*/false);
            if (peek().type == Token::Type::kName && peek().text == "if") {
                next();
                node->condition = parse_expression();
            }
            if (peek().type == Token::Type::kName && peek().text == "recursive")
                throw ParseError{peek().where, "recursive loops are not supported"};
            expect_end();
            ++index_;
            std::string end;
            node->body = parse_body({"else", "endfor"}, end);
            next();
            expect_end();
            ++index_;
            if (end == "else") {
                node->else_body = parse_body({"endfor"}, end);
                next();
                expect_end();
                ++index_;
            }
        } else if (k == "set") {
            node->kind = TemplateNode::Kind::kSet;
            node->targets.push_back(expect_name("a variable name"));
            if (accept_operator(".")) node->attribute = expect_name("an attribute name");
            while (node->attribute.empty() && accept_operator(","))
                node->targets.push_back(expect_name("a variable name"));
            if (accept_operator("=")) {
                node->expr = parse_expression();
                expect_end();
                ++index_;
            } else {
                expect_end();
                ++index_;
                std::string end;
                node->body = parse_body({"endset"}, end);
                next();
                expect_end();
                ++index_;
            }
        } else if (k == "break" || k == "continue") {
            node->kind = k == "break" ? TemplateNode::Kind::kBreak : TemplateNode::Kind::kContinue;
            expect_end();
            ++index_;
        } else {
            throw ParseError{keyword.where, "unknown or unsupported tag '" + k + "'"};
        }
        return node;
    }

    // ---- expressions
    // Nesting guard: a template is data from a model folder; deep nesting must fail, not exhaust the stack.
    struct Nesting {
        Nesting(int& depth, Where where) : depth_(depth) {
            if (++depth_ > kMaxNesting) {
                --depth_;
                throw ParseError{where, "nested deeper than " + std::to_string(kMaxNesting) + " levels"};
            }
        }
        ~Nesting() { --depth_; }
        Nesting(const Nesting&) = delete;
        Nesting& operator=(const Nesting&) = delete;
        int& depth_;
    };
    static constexpr int kMaxNesting = 200;

    ExprPtr parse_expression(bool allow_condition = true) {
        const Nesting guard(depth_, peek().where);
        ExprPtr expr = parse_or();
        if (!allow_condition) return expr;
        while (peek().type == Token::Type::kName && peek().text == "if") {
            const Where w = next().where;
            auto node = make(Expr::Kind::kCondition, w);
            node->items.push_back(expr);
            node->items.push_back(parse_or());
            if (peek().type == Token::Type::kName && peek().text == "else") {
                next();
                node->items.push_back(parse_expression());
            } else {
                node->items.push_back(nullptr);
            }
            expr = node;
        }
        return expr;
    }

    ExprPtr parse_or() {
        ExprPtr left = parse_and();
        while (accept_name("or"))
            left = binary("or", left, parse_and());
        return left;
    }
    ExprPtr parse_and() {
        ExprPtr left = parse_not();
        while (accept_name("and"))
            left = binary("and", left, parse_not());
        return left;
    }
    ExprPtr parse_not() {
        if (peek().type == Token::Type::kName && peek().text == "not") {
            const Where w = next().where;
            auto node = make(Expr::Kind::kUnary, w);
            node->op = "not";
            node->object = parse_not();
            return node;
        }
        return parse_compare();
    }
    ExprPtr parse_compare() {
        ExprPtr left = parse_math1();
        while (true) {
            const Token& t = peek();
            std::string op;
            if (t.type == Token::Type::kOperator && (t.text == "==" || t.text == "!=" || t.text == "<" ||
                                                     t.text == ">" || t.text == "<=" || t.text == ">="))
                op = t.text;
            else if (t.type == Token::Type::kName && t.text == "in")
                op = "in";
            else if (t.type == Token::Type::kName && t.text == "not" && cursor_ + 1 < tokens_->size() &&
                     (*tokens_)[cursor_ + 1].type == Token::Type::kName &&
                     (*tokens_)[cursor_ + 1].text == "in") {
                next();
                op = "not in";
            } else {
                return left;
            }
            next();
            left = binary(op, left, parse_math1());
        }
    }
    ExprPtr parse_math1() {
        ExprPtr left = parse_concat();
        while (peek().type == Token::Type::kOperator && (peek().text == "+" || peek().text == "-")) {
            const std::string op = next().text;
            left = binary(op, left, parse_concat());
        }
        return left;
    }
    ExprPtr parse_concat() {
        ExprPtr left = parse_math2();
        while (accept_operator("~"))
            left = binary("~", left, parse_math2());
        return left;
    }
    ExprPtr parse_math2() {
        ExprPtr left = parse_pow();
        while (peek().type == Token::Type::kOperator &&
               (peek().text == "*" || peek().text == "/" || peek().text == "//" || peek().text == "%")) {
            const std::string op = next().text;
            left = binary(op, left, parse_pow());
        }
        return left;
    }
    ExprPtr parse_pow() {
        ExprPtr left = parse_unary();
        while (accept_operator("**"))
            left = binary("**", left, parse_unary());
        return left;
    }
    ExprPtr parse_unary(bool with_filter = true) {
        const Nesting guard(depth_, peek().where);
        ExprPtr node;
        if (peek().type == Token::Type::kOperator && (peek().text == "-" || peek().text == "+")) {
            const Token t = next();
            auto unary = make(Expr::Kind::kUnary, t.where);
            unary->op = t.text;
            unary->object = parse_unary(false);
            node = unary;
        } else {
            node = parse_postfix(parse_primary());
        }
        return with_filter ? parse_filters(node) : node;
    }

    ExprPtr parse_primary() {
        const Token t = next();
        switch (t.type) {
            case Token::Type::kName: {
                if (t.text == "true" || t.text == "True") return literal(true, t.where);
                if (t.text == "false" || t.text == "False") return literal(false, t.where);
                if (t.text == "none" || t.text == "None") return literal(nullptr, t.where);
                auto node = make(Expr::Kind::kName, t.where);
                node->name = t.text;
                return node;
            }
            case Token::Type::kString: {
                std::string text = t.text;
                while (peek().type == Token::Type::kString)
                    text += next().text;  // adjacent literals concatenate
                return literal(text, t.where);
            }
            case Token::Type::kInteger:
            case Token::Type::kFloat:
                return literal(t.number, t.where);
            case Token::Type::kOperator:
                if (t.text == "(") {
                    ExprPtr inner = parse_expression();
                    if (accept_operator(",")) {  // a tuple: a list for our purposes
                        auto list = make(Expr::Kind::kList, t.where);
                        list->items.push_back(inner);
                        while (!accept_operator(")")) {
                            list->items.push_back(parse_expression());
                            if (!accept_operator(",")) {
                                expect_operator(")");
                                break;
                            }
                        }
                        return list;
                    }
                    expect_operator(")");
                    return inner;
                }
                if (t.text == "[") {
                    auto list = make(Expr::Kind::kList, t.where);
                    while (!accept_operator("]")) {
                        list->items.push_back(parse_expression());
                        if (!accept_operator(",")) {
                            expect_operator("]");
                            break;
                        }
                    }
                    return list;
                }
                if (t.text == "{") {
                    auto dict = make(Expr::Kind::kDict, t.where);
                    while (!accept_operator("}")) {
                        dict->items.push_back(parse_expression());
                        expect_operator(":");
                        dict->items.push_back(parse_expression());
                        if (!accept_operator(",")) {
                            expect_operator("}");
                            break;
                        }
                    }
                    return dict;
                }
                break;
            case Token::Type::kEnd:
                throw ParseError{t.where, "unexpected end of tag, expected an expression"};
        }
        throw ParseError{t.where, "unexpected '" + t.text + "'"};
    }

    ExprPtr parse_postfix(ExprPtr node) {
        while (true) {
            const Token& t = peek();
            if (t.type != Token::Type::kOperator) return node;
            if (t.text == ".") {
                const Where w = next().where;
                auto get = make(Expr::Kind::kGetAttr, w);
                get->object = node;
                if (peek().type == Token::Type::kInteger) {
                    get->kind = Expr::Kind::kGetItem;
                    get->items.push_back(literal(next().number, w));
                } else {
                    get->name = expect_name("an attribute name");
                }
                node = get;
            } else if (t.text == "[") {
                const Where w = next().where;
                ExprPtr parts[3] = {nullptr, nullptr, nullptr};
                int part = 0;
                bool is_slice = false;
                while (!accept_operator("]")) {
                    if (accept_operator(":")) {
                        is_slice = true;
                        if (++part > 2) throw ParseError{w, "too many ':' in a subscript"};
                        continue;
                    }
                    parts[part] = parse_expression();
                }
                if (is_slice) {
                    auto slice = make(Expr::Kind::kSlice, w);
                    slice->object = node;
                    slice->items.assign(parts, parts + 3);
                    node = slice;
                } else {
                    if (!parts[0]) throw ParseError{w, "empty subscript"};
                    auto get = make(Expr::Kind::kGetItem, w);
                    get->object = node;
                    get->items.push_back(parts[0]);
                    node = get;
                }
            } else if (t.text == "(") {
                const Where w = next().where;
                auto call = make(Expr::Kind::kCall, w);
                call->object = node;
                parse_arguments(*call);
                node = call;
            } else {
                return node;
            }
        }
    }

    // After "(": positional and keyword arguments up to ")".
    void parse_arguments(Expr& call) {
        while (!accept_operator(")")) {
            if (peek().type == Token::Type::kName && cursor_ + 1 < tokens_->size() &&
                (*tokens_)[cursor_ + 1].type == Token::Type::kOperator &&
                (*tokens_)[cursor_ + 1].text == "=") {
                std::string key = next().text;
                next();
                call.kwargs.emplace_back(std::move(key), parse_expression());
            } else {
                call.items.push_back(parse_expression());
            }
            if (!accept_operator(",")) {
                expect_operator(")");
                break;
            }
        }
    }

    ExprPtr parse_filters(ExprPtr node) {
        while (true) {
            if (peek().type == Token::Type::kOperator && peek().text == "|") {
                const Where w = next().where;
                auto filter = make(Expr::Kind::kFilter, w);
                filter->object = node;
                const Where name_at = peek().where;
                filter->name = expect_name("a filter name");
                if (!is_supported_filter(filter->name))
                    throw ParseError{name_at, "unknown filter '" + filter->name + "'"};
                if (accept_operator("(")) parse_arguments(*filter);
                node = filter;
            } else if (peek().type == Token::Type::kName && peek().text == "is") {
                const Where w = next().where;
                auto test = make(Expr::Kind::kTest, w);
                test->object = node;
                test->negated = accept_name("not");
                const Token name = next();
                if (name.type != Token::Type::kName)
                    throw ParseError{name.where, "expected a test name after 'is'"};
                test->name = name.text;
                if (!is_supported_test(test->name))
                    throw ParseError{name.where, "unknown test '" + test->name + "'"};
                if (accept_operator("(")) {
                    parse_arguments(*test);
                } else if (peek().type == Token::Type::kString || peek().type == Token::Type::kInteger ||
                           peek().type == Token::Type::kFloat ||
                           (peek().type == Token::Type::kName && peek().text != "and" &&
                            peek().text != "or" && peek().text != "else" && peek().text != "if" &&
                            peek().text != "is" && peek().text != "in" && peek().text != "not")) {
                    test->items.push_back(parse_primary());  // `is divisibleby 3`, `is sameas false`
                }
                node = test;
            } else {
                return node;
            }
        }
    }

    // ---- token helpers
    const Token& peek() const { return (*tokens_)[std::min(cursor_, tokens_->size() - 1)]; }
    const Token& previous() const { return (*tokens_)[cursor_ == 0 ? 0 : cursor_ - 1]; }
    const Token& next() {
        const Token& t = peek();
        if (cursor_ < tokens_->size() - 1) ++cursor_;
        return t;
    }
    bool accept_operator(const char* op) {
        if (peek().type == Token::Type::kOperator && peek().text == op) {
            next();
            return true;
        }
        return false;
    }
    bool accept_name(const char* name) {
        if (peek().type == Token::Type::kName && peek().text == name) {
            next();
            return true;
        }
        return false;
    }
    void expect_operator(const char* op) {
        if (!accept_operator(op))
            throw ParseError{peek().where, std::string("expected '") + op + "'" + got()};
    }
    std::string expect_name(const char* what) {
        if (peek().type != Token::Type::kName)
            throw ParseError{peek().where, std::string("expected ") + what + got()};
        return next().text;
    }
    void expect_end() {
        if (peek().type != Token::Type::kEnd)
            throw ParseError{peek().where, "expected the end of the tag" + got()};
    }
    std::string got() const {
        return peek().type == Token::Type::kEnd ? ", got the end of the tag" : ", got '" + peek().text + "'";
    }

    static std::shared_ptr<Expr> make(Expr::Kind kind, Where w) {
        auto e = std::make_shared<Expr>();
        e->kind = kind;
        e->where = w;
        return e;
    }
    static ExprPtr literal(nlohmann::json value, Where w) {
        auto e = make(Expr::Kind::kLiteral, w);
        e->value = std::move(value);
        return e;
    }
    static ExprPtr binary(const std::string& op, ExprPtr left, ExprPtr right) {
        auto e = make(Expr::Kind::kBinary, left->where);
        e->op = op;
        e->items = {std::move(left), std::move(right)};
        return e;
    }

    std::vector<Piece> pieces_;
    size_t index_ = 0;
    const std::vector<Token>* tokens_ = nullptr;
    size_t cursor_ = 0;
    int depth_ = 0;
};

}  // namespace

Result<ChatTemplate> parse_chat_template(std::string_view source) {
    // Jinja2 normalizes newlines to "\n" and drops a single trailing newline (keep_trailing_newline=False).
    std::string text;
    text.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            text += '\n';
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else {
            text += source[i];
        }
    }
    ChatTemplate parsed;
    parsed.source = std::string(source);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    try {
        Lexer lexer(text);
        Parser parser(lexer.run());
        parsed.body = parser.parse_root();
    } catch (const ParseError& e) {
        return Result<ChatTemplate>::Error("chat template: " + where_text(e.where) + ": " + e.message);
    } catch (const std::exception& e) {  // std::stoll/stod on an out-of-range literal
        return Result<ChatTemplate>::Error(std::string("chat template: ") + e.what());
    }
    return parsed;
}

}  // namespace slipway::chat
