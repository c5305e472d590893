// Chat templates, part 2: the evaluator. Walks the nodes of template_ast.h over a JSON context with
// Python/Jinja2 semantics (truthiness, undefined, str() of values, slicing, the filters, tests and
// string/dict methods the chat templates use), and tojson as transformers defines it (json.dumps,
// ensure_ascii=False).
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "chat/chat_template.h"
#include "chat/template_ast.h"
#include "contract/utf8.h"

namespace slipway::chat {
namespace {

// Objects keep their insertion order, as Python dicts do (tojson of tools, dict iteration).
using json = nlohmann::ordered_json;

// A runtime value: JSON data, Jinja's undefined, a namespace() object (mutable, shared), or a global
// function.
struct Value {
    enum class Kind { kUndefined, kJson, kNamespace, kFunction };
    Kind kind = Kind::kUndefined;
    json data;
    std::shared_ptr<json> attributes;  // namespace
    std::string name;                  // function name, or what was undefined (for messages)

    static Value of(json j) {
        Value v;
        v.kind = Kind::kJson;
        v.data = std::move(j);
        return v;
    }
    static Value undefined(std::string what) {
        Value v;
        v.name = std::move(what);
        return v;
    }
    bool is_undefined() const { return kind == Kind::kUndefined; }
    bool is_json() const { return kind == Kind::kJson; }
};

struct RenderError {
    Where where;
    std::string message;
};

struct BreakSignal {};
struct ContinueSignal {};

// ---- UTF-8 code points (Python strings index by code point)
std::vector<std::string> code_points(const std::string& s) {
    std::vector<std::string> out;
    for (size_t i = 0; i < s.size();) {
        size_t n = utf8_sequence_at(s, i);
        if (n == 0) n = 1;
        out.push_back(s.substr(i, n));
        i += n;
    }
    return out;
}

bool is_py_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string py_strip(const std::string& s, const std::optional<std::string>& chars, bool left, bool right) {
    const auto strip_this = [&](char c) {
        return chars ? chars->find(c) != std::string::npos : is_py_space(c);
    };
    size_t b = 0, e = s.size();
    if (left)
        while (b < e && strip_this(s[b]))
            ++b;
    if (right)
        while (e > b && strip_this(s[e - 1]))
            --e;
    return s.substr(b, e - b);
}

// ---- Python's repr/str and json.dumps
std::string py_float(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    std::string s = json(d).dump();
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s;
}

std::string py_repr(const json& j);

std::string py_str(const json& j) {
    switch (j.type()) {
        case json::value_t::string:
            return j.get<std::string>();
        case json::value_t::null:
            return "None";
        case json::value_t::boolean:
            return j.get<bool>() ? "True" : "False";
        case json::value_t::number_float:
            return py_float(j.get<double>());
        case json::value_t::number_integer:
        case json::value_t::number_unsigned:
            return j.dump();
        default:
            return py_repr(j);
    }
}

std::string py_repr(const json& j) {
    if (j.is_string()) {
        const std::string& s = j.get_ref<const std::string&>();
        const char quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
        std::string out(1, quote);
        for (const char c : s) {
            if (c == quote || c == '\\')
                out += '\\', out += c;
            else if (c == '\n')
                out += "\\n";
            else if (c == '\r')
                out += "\\r";
            else if (c == '\t')
                out += "\\t";
            else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
                out += buf;
            } else
                out += c;
        }
        return out + quote;
    }
    if (j.is_array()) {
        std::string out = "[";
        for (size_t i = 0; i < j.size(); ++i)
            out += (i ? ", " : "") + py_repr(j[i]);
        return out + "]";
    }
    if (j.is_object()) {
        std::string out = "{";
        bool first = true;
        for (const auto& [k, v] : j.items()) {
            out += (first ? "" : ", ") + py_repr(json(k)) + ": " + py_repr(v);
            first = false;
        }
        return out + "}";
    }
    return py_str(j);
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

struct DumpOptions {
    std::optional<std::string> indent;  // json.dumps(indent=...): a number of spaces or a string
    std::string item_separator = ", ";
    std::string key_separator = ": ";
};

// json.dumps(x, ensure_ascii=False, indent, separators) as Python writes it.
void py_json_dumps(const json& j, const DumpOptions& o, int level, std::string& out) {
    const auto newline = [&](int l) {
        out += '\n';
        for (int i = 0; i < l; ++i)
            out += *o.indent;
    };
    switch (j.type()) {
        case json::value_t::null:
            out += "null";
            return;
        case json::value_t::boolean:
            out += j.get<bool>() ? "true" : "false";
            return;
        case json::value_t::number_float: {
            const double d = j.get<double>();
            out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : py_float(d);
            return;
        }
        case json::value_t::string:
            out += json_string(j.get_ref<const std::string&>());
            return;
        case json::value_t::array:
        case json::value_t::object: {
            const bool is_array = j.is_array();
            if (j.empty()) {
                out += is_array ? "[]" : "{}";
                return;
            }
            out += is_array ? '[' : '{';
            bool first = true;
            for (auto it = j.begin(); it != j.end(); ++it) {
                if (!first) out += o.item_separator;
                first = false;
                if (o.indent) newline(level + 1);
                if (!is_array) out += json_string(it.key()) + o.key_separator;
                py_json_dumps(*it, o, level + 1, out);
            }
            if (o.indent) newline(level);
            out += is_array ? ']' : '}';
            return;
        }
        default:
            out += j.dump();
            return;
    }
}

class Renderer {
public:
    explicit Renderer(const json& context) : context_(context) { scopes_.emplace_back(); }

    void run(const NodeList& nodes, std::string& out) {
        for (const auto& node : nodes)
            run(*node, out);
    }

private:
    void run(const TemplateNode& node, std::string& out) {
        switch (node.kind) {
            case TemplateNode::Kind::kText:
                out += node.text;
                return;
            case TemplateNode::Kind::kOutput:
                out += to_output(eval(*node.expr), node.expr->where);
                return;
            case TemplateNode::Kind::kBlock:
                run(node.body, out);
                return;
            case TemplateNode::Kind::kBreak:
                throw BreakSignal{};
            case TemplateNode::Kind::kContinue:
                throw ContinueSignal{};
            case TemplateNode::Kind::kIf:
                for (const auto& [condition, body] : node.branches)
                    if (truthy(eval(*condition))) {
                        run(body, out);
                        return;
                    }
                run(node.else_body, out);
                return;
            case TemplateNode::Kind::kSet: {
                Value value;
                if (node.expr) {
                    value = eval(*node.expr);
                } else {
                    std::string text;
                    run(node.body, text);
                    value = Value::of(text);
                }
                if (!node.attribute.empty()) {
                    Value target = lookup(node.targets[0]);
                    if (target.kind != Value::Kind::kNamespace)
                        throw RenderError{node.where, "cannot assign attribute '" + node.attribute +
                                                          "' of '" + node.targets[0] +
                                                          "': it is not a namespace()"};
                    (*target.attributes)[node.attribute] = value.data;
                    return;
                }
                assign(node.targets, value, node.where);
                return;
            }
            case TemplateNode::Kind::kFor:
                run_for(node, out);
                return;
        }
    }

    void run_for(const TemplateNode& node, std::string& out) {
        const Value iterable = eval(*node.expr);
        std::vector<Value> items = iterate(iterable, node.expr->where);
        if (node.condition) {
            std::vector<Value> kept;
            for (auto& item : items) {
                scopes_.emplace_back();
                assign(node.targets, item, node.where);
                const bool keep = truthy(eval(*node.condition));
                scopes_.pop_back();
                if (keep) kept.push_back(std::move(item));
            }
            items = std::move(kept);
        }
        if (items.empty()) {
            run(node.else_body, out);
            return;
        }
        const size_t n = items.size();
        for (size_t i = 0; i < n; ++i) {
            scopes_.emplace_back();
            assign(node.targets, items[i], node.where);
            json loop = {{"index0", i}, {"index", i + 1},    {"first", i == 0},       {"last", i + 1 == n},
                         {"length", n}, {"revindex", n - i}, {"revindex0", n - i - 1}};
            loop["previtem"] = i > 0 && items[i - 1].is_json() ? items[i - 1].data : json();
            loop["nextitem"] = i + 1 < n && items[i + 1].is_json() ? items[i + 1].data : json();
            scopes_.back()["loop"] = Value::of(std::move(loop));
            bool stop = false;
            try {
                run(node.body, out);
            } catch (const BreakSignal&) {
                stop = true;
            } catch (const ContinueSignal&) {
            }
            scopes_.pop_back();
            if (stop) break;
        }
    }

    void assign(const std::vector<std::string>& targets, const Value& value, Where where) {
        if (targets.size() == 1) {
            scopes_.back()[targets[0]] = value;
            return;
        }
        if (!value.is_json() || !value.data.is_array() || value.data.size() != targets.size())
            throw RenderError{where, "cannot unpack " + describe(value) + " into " +
                                         std::to_string(targets.size()) + " variables"};
        for (size_t i = 0; i < targets.size(); ++i)
            scopes_.back()[targets[i]] = Value::of(value.data[i]);
    }

    Value lookup(const std::string& name) const {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            auto found = it->find(name);
            if (found != it->end()) return found->second;
        }
        if (context_.is_object() && context_.contains(name)) return Value::of(context_.at(name));
        if (name == "raise_exception" || name == "namespace" || name == "range" || name == "dict") {
            Value f;
            f.kind = Value::Kind::kFunction;
            f.name = name;
            return f;
        }
        return Value::undefined("'" + name + "' is undefined");
    }

    // ---- expressions
    Value eval(const Expr& e) {
        switch (e.kind) {
            case Expr::Kind::kLiteral:
                return Value::of(json(e.value));
            case Expr::Kind::kName:
                return lookup(e.name);
            case Expr::Kind::kList: {
                json list = json::array();
                for (const auto& item : e.items)
                    list.push_back(need_json(eval(*item), item->where));
                return Value::of(std::move(list));
            }
            case Expr::Kind::kDict: {
                json dict = json::object();
                for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
                    const Value key = eval(*e.items[i]);
                    if (!key.is_json() || !key.data.is_string())
                        throw RenderError{e.items[i]->where, "dict keys must be strings here"};
                    dict[key.data.get<std::string>()] =
                        need_json(eval(*e.items[i + 1]), e.items[i + 1]->where);
                }
                return Value::of(std::move(dict));
            }
            case Expr::Kind::kGetAttr:
                return get_attribute(eval(*e.object), e.name, e.where);
            case Expr::Kind::kGetItem:
                return get_item(eval(*e.object), eval(*e.items[0]), e.where);
            case Expr::Kind::kSlice:
                return slice(e);
            case Expr::Kind::kCall:
                return call(e);
            case Expr::Kind::kFilter:
                return filter(e);
            case Expr::Kind::kTest: {
                const bool result = test(e.name, eval(*e.object), evaluate_all(e.items), e.where);
                return Value::of(e.negated ? !result : result);
            }
            case Expr::Kind::kUnary: {
                const Value v = eval(*e.object);
                if (e.op == "not") return Value::of(!truthy(v));
                const json n = need_number(v, e.where, e.op);
                if (e.op == "+") return Value::of(n);
                return n.is_number_float() ? Value::of(-n.get<double>()) : Value::of(-n.get<int64_t>());
            }
            case Expr::Kind::kBinary:
                return binary(e);
            case Expr::Kind::kCondition:
                if (truthy(eval(*e.items[1]))) return eval(*e.items[0]);
                return e.items[2] ? eval(*e.items[2]) : Value::undefined("the else branch of a conditional");
        }
        throw RenderError{e.where, "unknown expression"};
    }

    std::vector<Value> evaluate_all(const std::vector<ExprPtr>& exprs) {
        std::vector<Value> out;
        for (const auto& x : exprs)
            out.push_back(eval(*x));
        return out;
    }

    Value binary(const Expr& e) {
        const std::string& op = e.op;
        if (op == "and") {
            Value left = eval(*e.items[0]);
            return truthy(left) ? eval(*e.items[1]) : left;
        }
        if (op == "or") {
            Value left = eval(*e.items[0]);
            return truthy(left) ? left : eval(*e.items[1]);
        }
        const Value a = eval(*e.items[0]);
        const Value b = eval(*e.items[1]);
        if (op == "==") return Value::of(equal(a, b));
        if (op == "!=") return Value::of(!equal(a, b));
        if (op == "in") return Value::of(contains(b, a, e.where));
        if (op == "not in") return Value::of(!contains(b, a, e.where));
        if (op == "~") return Value::of(to_output(a, e.where) + to_output(b, e.where));
        const json& x = need_json(a, e.items[0]->where);
        const json& y = need_json(b, e.items[1]->where);
        if (op == "+") {
            if (x.is_string() && y.is_string()) return Value::of(x.get<std::string>() + y.get<std::string>());
            if (x.is_array() && y.is_array()) {
                json list = x;
                for (const auto& item : y)
                    list.push_back(item);
                return Value::of(std::move(list));
            }
        }
        if (op == "*" && x.is_string() && y.is_number_integer()) {
            std::string s;
            for (int64_t i = 0; i < y.get<int64_t>(); ++i)
                s += x.get<std::string>();
            return Value::of(s);
        }
        if (op == "<" || op == ">" || op == "<=" || op == ">=") {
            int c = 0;
            if (x.is_string() && y.is_string())
                c = x.get<std::string>().compare(y.get<std::string>());
            else if (is_number(x) && is_number(y))
                c = as_double(x) < as_double(y) ? -1 : as_double(x) > as_double(y) ? 1 : 0;
            else
                throw RenderError{
                    e.where, "'" + op + "' not supported between " + describe(a) + " and " + describe(b)};
            return Value::of(op == "<" ? c < 0 : op == ">" ? c > 0 : op == "<=" ? c <= 0 : c >= 0);
        }
        if (!is_number(x) || !is_number(y))
            throw RenderError{
                e.where, "unsupported operand types for " + op + ": " + describe(a) + " and " + describe(b)};
        const bool ints = !x.is_number_float() && !y.is_number_float();
        if (ints && op != "/" && op != "**") {
            const int64_t i = as_int(x), j = as_int(y);
            if ((op == "//" || op == "%") && j == 0)
                throw RenderError{e.where, "integer division or modulo by zero"};
            if (op == "+") return Value::of(i + j);
            if (op == "-") return Value::of(i - j);
            if (op == "*") return Value::of(i * j);
            const int64_t q = i / j - ((i % j != 0) && ((i < 0) != (j < 0)) ? 1 : 0);  // Python floors
            if (op == "//") return Value::of(q);
            if (op == "%") return Value::of(i - q * j);
        }
        const double i = as_double(x), j = as_double(y);
        if (op == "+") return Value::of(i + j);
        if (op == "-") return Value::of(i - j);
        if (op == "*") return Value::of(i * j);
        if (op == "**") {
            if (ints && as_int(y) >= 0) return Value::of(static_cast<int64_t>(std::llround(std::pow(i, j))));
            return Value::of(std::pow(i, j));
        }
        if (j == 0) throw RenderError{e.where, "division by zero"};
        if (op == "/") return Value::of(i / j);
        if (op == "//") return Value::of(std::floor(i / j));
        if (op == "%") return Value::of(i - std::floor(i / j) * j);
        throw RenderError{e.where, "unknown operator " + op};
    }

    Value get_attribute(const Value& object, const std::string& name, Where where) {
        if (object.is_undefined()) throw RenderError{where, object.name + " (reading ." + name + ")"};
        if (object.kind == Value::Kind::kNamespace) {
            if (object.attributes->contains(name)) return Value::of(object.attributes->at(name));
            return Value::undefined("namespace has no attribute '" + name + "'");
        }
        if (object.is_json() && object.data.is_object() && object.data.contains(name))
            return Value::of(object.data.at(name));
        return Value::undefined(describe(object) + " has no attribute '" + name + "'");
    }

    Value get_item(const Value& object, const Value& key, Where where) {
        if (object.is_undefined()) throw RenderError{where, object.name + " (subscripted)"};
        if (object.kind == Value::Kind::kNamespace && key.is_json() && key.data.is_string())
            return get_attribute(object, key.data.get<std::string>(), where);
        if (object.is_json() && key.is_json()) {
            const json& o = object.data;
            const json& k = key.data;
            if (o.is_object() && k.is_string()) {
                if (o.contains(k.get<std::string>())) return Value::of(o.at(k.get<std::string>()));
                return Value::undefined(describe(object) + " has no key " + py_repr(k));
            }
            if ((o.is_array() || o.is_string()) && k.is_number_integer()) {
                std::vector<std::string> chars;
                if (o.is_string()) chars = code_points(o.get<std::string>());
                const int64_t n =
                    o.is_array() ? static_cast<int64_t>(o.size()) : static_cast<int64_t>(chars.size());
                int64_t i = k.get<int64_t>();
                if (i < 0) i += n;
                if (i < 0 || i >= n) return Value::undefined(describe(object) + " has no item " + k.dump());
                return o.is_array() ? Value::of(o[static_cast<size_t>(i)])
                                    : Value::of(chars[static_cast<size_t>(i)]);
            }
            if (k.is_string()) return Value::undefined(describe(object) + " has no attribute " + py_repr(k));
        }
        return Value::undefined(describe(object) + " has no item " + describe(key));
    }

    Value slice(const Expr& e) {
        const Value object = eval(*e.object);
        const auto bound = [&](int i) -> std::optional<int64_t> {
            if (!e.items[i]) return std::nullopt;
            const Value v = eval(*e.items[i]);
            if (v.is_json() && v.data.is_null()) return std::nullopt;
            if (!v.is_json() || !v.data.is_number_integer())
                throw RenderError{e.items[i]->where, "slice indices must be integers"};
            return v.data.get<int64_t>();
        };
        const auto start = bound(0), stop = bound(1), step_opt = bound(2);
        const int64_t step = step_opt.value_or(1);
        if (step == 0) throw RenderError{e.where, "slice step cannot be zero"};
        if (object.is_undefined()) throw RenderError{e.where, object.name + " (sliced)"};
        const json& o = object.data;
        if (!o.is_array() && !o.is_string()) throw RenderError{e.where, "cannot slice " + describe(object)};
        std::vector<std::string> chars;
        if (o.is_string()) chars = code_points(o.get<std::string>());
        const int64_t n = o.is_array() ? static_cast<int64_t>(o.size()) : static_cast<int64_t>(chars.size());
        // Python's slice.indices()
        const auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
            if (!v) return dflt;
            int64_t x = *v;
            if (x < 0) x += n;
            if (step > 0) return std::clamp<int64_t>(x, 0, n);
            return std::clamp<int64_t>(x, -1, n - 1);
        };
        const int64_t b = clamp(start, step > 0 ? 0 : n - 1), en = clamp(stop, step > 0 ? n : -1);
        json list = json::array();
        std::string text;
        for (int64_t i = b; step > 0 ? i < en : i > en; i += step) {
            if (o.is_array())
                list.push_back(o[static_cast<size_t>(i)]);
            else
                text += chars[static_cast<size_t>(i)];
        }
        return o.is_array() ? Value::of(std::move(list)) : Value::of(text);
    }

    Value call(const Expr& e) {
        std::vector<Value> args = evaluate_all(e.items);
        std::map<std::string, Value> kwargs;
        for (const auto& [k, v] : e.kwargs)
            kwargs[k] = eval(*v);
        if (e.object->kind == Expr::Kind::kGetAttr) {
            const Value self = eval(*e.object->object);
            return method(self, e.object->name, args, e.where);
        }
        const Value callee = eval(*e.object);
        if (callee.kind != Value::Kind::kFunction)
            throw RenderError{e.where, describe(callee) + " is not callable"};
        if (callee.name == "raise_exception") {
            const std::string message = args.empty() ? "" : to_output(args[0], e.where);
            throw RenderError{e.where, "raise_exception: " + message};
        }
        if (callee.name == "namespace" || callee.name == "dict") {
            json attributes = json::object();
            if (!args.empty() && args[0].is_json() && args[0].data.is_object()) attributes = args[0].data;
            for (const auto& [k, v] : kwargs)
                attributes[k] = v.data;
            if (callee.name == "dict") return Value::of(attributes);
            Value ns;
            ns.kind = Value::Kind::kNamespace;
            ns.attributes = std::make_shared<json>(std::move(attributes));
            return ns;
        }
        if (callee.name == "range") {
            int64_t start = 0, stop = 0, step = 1;
            std::vector<int64_t> a;
            for (const auto& v : args)
                a.push_back(as_int(need_number(v, e.where, "range")));
            if (a.size() == 1)
                stop = a[0];
            else if (a.size() >= 2)
                start = a[0], stop = a[1];
            if (a.size() == 3) step = a[2];
            if (step == 0) throw RenderError{e.where, "range() step must not be zero"};
            json list = json::array();
            for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
                list.push_back(i);
            return Value::of(std::move(list));
        }
        throw RenderError{e.where, "unknown function " + callee.name};
    }

    // The string and dict methods templates call: "text".strip(), message.get('x'), d.items() ...
    Value method(const Value& self, const std::string& name, const std::vector<Value>& args, Where where) {
        if (self.is_undefined()) throw RenderError{where, self.name + " (calling ." + name + "())"};
        const auto string_arg = [&](size_t i) -> std::optional<std::string> {
            if (i >= args.size() || (args[i].is_json() && args[i].data.is_null())) return std::nullopt;
            if (!args[i].is_json() || !args[i].data.is_string())
                throw RenderError{where, "." + name + "() expects a string argument"};
            return args[i].data.get<std::string>();
        };
        if (self.is_json() && self.data.is_string()) {
            const std::string& s = self.data.get_ref<const std::string&>();
            if (name == "strip") return Value::of(py_strip(s, string_arg(0), true, true));
            if (name == "lstrip") return Value::of(py_strip(s, string_arg(0), true, false));
            if (name == "rstrip") return Value::of(py_strip(s, string_arg(0), false, true));
            if (name == "upper" || name == "lower") return Value::of(change_case(s, name == "upper"));
            if (name == "startswith" || name == "endswith") {
                std::vector<std::string> candidates;
                if (!args.empty() && args[0].is_json() && args[0].data.is_array()) {
                    for (const auto& c : args[0].data)
                        candidates.push_back(c.get<std::string>());
                } else if (auto c = string_arg(0)) {
                    candidates.push_back(*c);
                } else {
                    throw RenderError{where, "." + name + "() needs an argument"};
                }
                for (const auto& c : candidates) {
                    if (c.size() > s.size()) continue;
                    if (name == "startswith" ? s.compare(0, c.size(), c) == 0
                                             : s.compare(s.size() - c.size(), c.size(), c) == 0)
                        return Value::of(true);
                }
                return Value::of(false);
            }
            if (name == "split")
                return Value::of(
                    py_split(s, string_arg(0), args.size() > 1 ? as_int(args[1].data) : -1, where));
            if (name == "replace") {
                const auto from = string_arg(0), to = string_arg(1);
                if (!from || !to) throw RenderError{where, ".replace() needs two strings"};
                return Value::of(replace_all(s, *from, *to));
            }
            if (name == "title" || name == "capitalize")
                return Value::of(name == "title" ? title(s) : capitalize(s));
        }
        if (self.is_json() && self.data.is_object()) {
            const json& d = self.data;
            if (name == "items") return Value::of(items_of(d));
            if (name == "keys" || name == "values") {
                json list = json::array();
                for (const auto& [k, v] : d.items())
                    list.push_back(name == "keys" ? json(k) : v);
                return Value::of(std::move(list));
            }
            if (name == "get") {
                const auto key = string_arg(0);
                if (key && d.contains(*key)) return Value::of(d.at(*key));
                return args.size() > 1 ? args[1] : Value::of(nullptr);
            }
        }
        throw RenderError{where, describe(self) + " has no method ." + name + "()"};
    }

    Value filter(const Expr& e) {
        const Value input = eval(*e.object);
        std::vector<Value> args = evaluate_all(e.items);
        std::map<std::string, Value> kwargs;
        for (const auto& [k, v] : e.kwargs)
            kwargs[k] = eval(*v);
        const auto arg = [&](size_t i, const char* key) -> const Value* {
            if (auto it = kwargs.find(key); it != kwargs.end()) return &it->second;
            return i < args.size() ? &args[i] : nullptr;
        };
        const std::string& f = e.name;
        if (f == "default" || f == "d") {
            const Value* fallback = arg(0, "default_value");
            const Value* boolean = arg(1, "boolean");
            const bool use = input.is_undefined() || (boolean && truthy(*boolean) && !truthy(input));
            return use ? (fallback ? *fallback : Value::of("")) : input;
        }
        if (f == "length" || f == "count") return Value::of(length(input, e.where));
        if (f == "string") return Value::of(to_output(input, e.where));
        if (f == "tojson") {
            DumpOptions options;
            if (const Value* indent = arg(1, "indent");
                indent && indent->is_json() && !indent->data.is_null()) {
                options.indent = indent->data.is_string()
                                     ? indent->data.get<std::string>()
                                     : std::string(static_cast<size_t>(as_int(indent->data)), ' ');
                options.item_separator = ",";
            }
            if (const Value* separators = arg(2, "separators"); separators && separators->is_json() &&
                                                                separators->data.is_array() &&
                                                                separators->data.size() == 2) {
                options.item_separator = separators->data[0].get<std::string>();
                options.key_separator = separators->data[1].get<std::string>();
            }
            json value = need_json(input, e.where);
            if (const Value* sort = arg(3, "sort_keys"); sort && truthy(*sort))
                value = json(nlohmann::json(value));  // nlohmann::json keeps objects sorted by key
            std::string out;
            py_json_dumps(value, options, 0, out);
            return Value::of(out);
        }
        if (input.is_undefined() && (f == "items" || f == "list" || f == "join" || f == "reject" ||
                                     f == "select" || f == "selectattr" || f == "rejectattr" || f == "map"))
            return f == "join" ? Value::of("") : Value::of(json::array());
        if (f == "items") {
            const json& d = need_json(input, e.where);
            if (!d.is_object())
                throw RenderError{e.where, "items filter expects a mapping, got " + describe(input)};
            return Value::of(items_of(d));
        }
        if (f == "list") {
            json list = json::array();
            for (const auto& v : iterate(input, e.where))
                list.push_back(v.data);
            return Value::of(std::move(list));
        }
        if (f == "first" || f == "last") {
            const std::vector<Value> all = iterate(input, e.where);
            if (all.empty()) return Value::undefined("no " + f + " item of an empty sequence");
            return f == "first" ? all.front() : all.back();
        }
        if (f == "join") {
            const Value* separator = arg(0, "d");
            const Value* attribute = arg(1, "attribute");
            std::string out;
            bool first = true;
            for (const auto& v : iterate(input, e.where)) {
                if (!first && separator) out += to_output(*separator, e.where);
                first = false;
                out += to_output(attribute ? get_attribute(v, to_output(*attribute, e.where), e.where) : v,
                                 e.where);
            }
            return Value::of(out);
        }
        if (f == "select" || f == "reject" || f == "selectattr" || f == "rejectattr") {
            const bool by_attribute = f == "selectattr" || f == "rejectattr";
            const bool keep_when = f == "select" || f == "selectattr";
            size_t next_arg = 0;
            std::string attribute;
            if (by_attribute) {
                if (args.empty()) throw RenderError{e.where, f + " needs an attribute name"};
                attribute = to_output(args[next_arg++], e.where);
            }
            std::string test_name;
            if (next_arg < args.size()) test_name = to_output(args[next_arg++], e.where);
            const std::vector<Value> test_args(args.begin() + static_cast<long>(next_arg), args.end());
            json list = json::array();
            for (const auto& v : iterate(input, e.where)) {
                const Value subject = by_attribute ? get_attribute_or_undefined(v, attribute) : v;
                const bool passed =
                    test_name.empty() ? truthy(subject) : test(test_name, subject, test_args, e.where);
                if (passed == keep_when) list.push_back(v.data);
            }
            return Value::of(std::move(list));
        }
        if (f == "map") {
            json list = json::array();
            const Value* attribute = arg(static_cast<size_t>(-1), "attribute");
            for (const auto& v : iterate(input, e.where)) {
                if (attribute) {
                    Value got = get_attribute_or_undefined(v, to_output(*attribute, e.where));
                    if (got.is_undefined()) {
                        if (const Value* d = arg(static_cast<size_t>(-1), "default")) got = *d;
                    }
                    list.push_back(got.data);
                } else {
                    throw RenderError{e.where, "map() is supported with attribute= only"};
                }
            }
            return Value::of(std::move(list));
        }
        if (f == "trim" || f == "upper" || f == "lower" || f == "capitalize" || f == "title" ||
            f == "replace") {
            const std::string s = to_output(input, e.where);
            if (f == "trim") {
                const Value* chars = arg(0, "chars");
                return Value::of(py_strip(s,
                                          chars && chars->is_json() && chars->data.is_string()
                                              ? std::optional<std::string>(chars->data.get<std::string>())
                                              : std::nullopt,
                                          true, true));
            }
            if (f == "upper" || f == "lower") return Value::of(change_case(s, f == "upper"));
            if (f == "capitalize") return Value::of(capitalize(s));
            if (f == "title") return Value::of(title(s));
            if (args.size() < 2) throw RenderError{e.where, "replace needs two arguments"};
            return Value::of(replace_all(s, to_output(args[0], e.where), to_output(args[1], e.where)));
        }
        if (f == "int") {
            const json& j = input.data;
            if (j.is_number()) return Value::of(static_cast<int64_t>(as_double(j)));
            if (j.is_string()) {
                try {
                    return Value::of(static_cast<int64_t>(std::stoll(j.get<std::string>())));
                } catch (...) {
                }
            }
            return args.empty() ? Value::of(0) : args[0];
        }
        if (f == "abs") {
            const json n = need_number(input, e.where, "abs");
            return n.is_number_float() ? Value::of(std::fabs(n.get<double>()))
                                       : Value::of(std::llabs(as_int(n)));
        }
        if (f == "safe") return input;
        throw RenderError{e.where, "unknown filter '" + f + "'"};
    }

    bool test(const std::string& name, const Value& v, const std::vector<Value>& args, Where where) {
        const json* j = v.is_json() ? &v.data : nullptr;
        if (name == "defined") return !v.is_undefined();
        if (name == "undefined") return v.is_undefined();
        if (name == "none") return j && j->is_null();
        if (name == "string") return j && j->is_string();
        if (name == "number") return j && j->is_number();
        if (name == "integer") return j && j->is_number_integer();
        if (name == "float") return j && j->is_number_float();
        if (name == "boolean") return j && j->is_boolean();
        if (name == "true") return j && j->is_boolean() && j->get<bool>();
        if (name == "false") return j && j->is_boolean() && !j->get<bool>();
        if (name == "mapping") return (j && j->is_object()) || v.kind == Value::Kind::kNamespace;
        if (name == "iterable")
            return v.is_undefined() || (j && (j->is_array() || j->is_object() || j->is_string()));
        if (name == "sequence") return j && (j->is_array() || j->is_object() || j->is_string());
        if (name == "callable") return v.kind == Value::Kind::kFunction;
        if (name == "odd" || name == "even") {
            const int64_t n = as_int(need_number(v, where, name));
            return ((n % 2 + 2) % 2 == 1) == (name == "odd");
        }
        if (name == "divisibleby") {
            if (args.empty()) throw RenderError{where, "divisibleby needs an argument"};
            const int64_t d = as_int(need_number(args[0], where, name));
            return d != 0 && as_int(need_number(v, where, name)) % d == 0;
        }
        if (args.empty() &&
            (name == "equalto" || name == "eq" || name == "sameas" || name == "in" || name == "ne"))
            throw RenderError{where, "test '" + name + "' needs an argument"};
        if (name == "equalto" || name == "eq" || name == "==" || name == "sameas") return equal(v, args[0]);
        if (name == "ne" || name == "!=") return !equal(v, args[0]);
        if (name == "in") return contains(args[0], v, where);
        if (name == "lower" || name == "upper") {
            if (!j || !j->is_string()) return false;
            const std::string& s = j->get_ref<const std::string&>();
            return s == change_case(s, name == "upper") && s != change_case(s, name != "upper");
        }
        throw RenderError{where, "unknown test '" + name + "'"};
    }

    // ---- helpers
    Value get_attribute_or_undefined(const Value& v, const std::string& attribute) {
        if (v.is_json() && v.data.is_object() && v.data.contains(attribute))
            return Value::of(v.data.at(attribute));
        return Value::undefined("no attribute '" + attribute + "'");
    }

    std::vector<Value> iterate(const Value& v, Where where) {
        std::vector<Value> out;
        if (v.is_undefined()) return out;
        if (!v.is_json()) throw RenderError{where, describe(v) + " is not iterable"};
        const json& j = v.data;
        if (j.is_array()) {
            for (const auto& item : j)
                out.push_back(Value::of(item));
        } else if (j.is_object()) {
            for (const auto& [k, unused] : j.items())
                out.push_back(Value::of(k));
        } else if (j.is_string()) {
            for (auto& c : code_points(j.get<std::string>()))
                out.push_back(Value::of(c));
        } else {
            throw RenderError{where, describe(v) + " is not iterable"};
        }
        return out;
    }

    int64_t length(const Value& v, Where where) {
        if (v.is_undefined()) return 0;
        if (v.is_json()) {
            if (v.data.is_string())
                return static_cast<int64_t>(code_points(v.data.get<std::string>()).size());
            if (v.data.is_array() || v.data.is_object()) return static_cast<int64_t>(v.data.size());
        }
        throw RenderError{where, describe(v) + " has no length"};
    }

    bool contains(const Value& container, const Value& item, Where where) {
        if (container.is_undefined()) return false;
        if (!container.is_json())
            throw RenderError{where, "'in' needs a string, list or mapping on the right"};
        const json& c = container.data;
        if (c.is_string()) {
            if (!item.is_json() || !item.data.is_string())
                throw RenderError{where,
                                  "'in <string>' requires string as left operand, not " + describe(item)};
            return c.get_ref<const std::string&>().find(item.data.get<std::string>()) != std::string::npos;
        }
        if (c.is_object())
            return item.is_json() && item.data.is_string() && c.contains(item.data.get<std::string>());
        if (c.is_array()) {
            for (const auto& x : c)
                if (equal(Value::of(x), item)) return true;
            return false;
        }
        throw RenderError{where, "argument of type " + describe(container) + " is not iterable"};
    }

    static bool equal(const Value& a, const Value& b) {
        if (a.is_undefined() || b.is_undefined()) return a.is_undefined() && b.is_undefined();
        if (a.kind != b.kind) return false;
        if (a.kind == Value::Kind::kNamespace) return a.attributes == b.attributes;
        if (a.kind == Value::Kind::kFunction) return a.name == b.name;
        const json& x = a.data;
        const json& y = b.data;
        // Python: True == 1; nlohmann keeps booleans and numbers apart.
        if ((x.is_boolean() && y.is_number()) || (x.is_number() && y.is_boolean()))
            return as_double(x.is_boolean() ? json(x.get<bool>() ? 1 : 0) : x) ==
                   as_double(y.is_boolean() ? json(y.get<bool>() ? 1 : 0) : y);
        if (x.is_structured() && y.is_structured())  // Python's dict equality ignores key order
            return nlohmann::json(x) == nlohmann::json(y);
        return x == y;
    }

    static bool truthy(const Value& v) {
        switch (v.kind) {
            case Value::Kind::kUndefined:
                return false;
            case Value::Kind::kNamespace:
            case Value::Kind::kFunction:
                return true;
            case Value::Kind::kJson:
                break;
        }
        const json& j = v.data;
        switch (j.type()) {
            case json::value_t::null:
                return false;
            case json::value_t::boolean:
                return j.get<bool>();
            case json::value_t::number_integer:
            case json::value_t::number_unsigned:
            case json::value_t::number_float:
                return as_double(j) != 0;
            case json::value_t::string:
                return !j.get_ref<const std::string&>().empty();  // json::empty() is false
            case json::value_t::array:
            case json::value_t::object:
                return !j.empty();
            default:
                return true;
        }
    }

    std::string to_output(const Value& v, Where) const {
        switch (v.kind) {
            case Value::Kind::kUndefined:
                return "";
            case Value::Kind::kNamespace:
                return "<Namespace " + py_repr(*v.attributes) + ">";
            case Value::Kind::kFunction:
                return "<function " + v.name + ">";
            case Value::Kind::kJson:
                return py_str(v.data);
        }
        return "";
    }

    const json& need_json(const Value& v, Where where) const {
        if (v.is_json()) return v.data;
        if (v.is_undefined()) throw RenderError{where, v.name};
        throw RenderError{where, describe(v) + " cannot be used here"};
    }

    json need_number(const Value& v, Where where, const std::string& what) const {
        const json& j = need_json(v, where);
        if (j.is_boolean()) return json(j.get<bool>() ? 1 : 0);
        if (!j.is_number()) throw RenderError{where, what + " needs a number, got " + describe(v)};
        return j;
    }

    static bool is_number(const json& j) { return j.is_number() || j.is_boolean(); }
    static double as_double(const json& j) {
        return j.is_boolean() ? (j.get<bool>() ? 1.0 : 0.0) : j.get<double>();
    }
    static int64_t as_int(const json& j) {
        if (j.is_boolean()) return j.get<bool>() ? 1 : 0;
        if (j.is_number_float()) return static_cast<int64_t>(j.get<double>());
        if (!j.is_number()) return 0;
        return j.get<int64_t>();
    }

    static std::string describe(const Value& v) {
        switch (v.kind) {
            case Value::Kind::kUndefined:
                return "undefined";
            case Value::Kind::kNamespace:
                return "namespace";
            case Value::Kind::kFunction:
                return "function " + v.name;
            case Value::Kind::kJson:
                break;
        }
        switch (v.data.type()) {
            case json::value_t::null:
                return "None";
            case json::value_t::boolean:
                return "bool";
            case json::value_t::number_float:
                return "float";
            case json::value_t::number_integer:
            case json::value_t::number_unsigned:
                return "int";
            case json::value_t::string:
                return "str";
            case json::value_t::array:
                return "list";
            case json::value_t::object:
                return "dict";
            default:
                return "value";
        }
    }

    static json items_of(const json& d) {
        json list = json::array();
        for (const auto& [k, v] : d.items())
            list.push_back(json::array({k, v}));
        return list;
    }

    static std::string change_case(const std::string& s, bool upper) {
        std::string out = s;  // ASCII only: Cyrillic etc. is left as is
        for (auto& c : out)
            c = static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(c))
                                        : std::tolower(static_cast<unsigned char>(c)));
        return out;
    }
    static std::string capitalize(const std::string& s) {
        std::string out = change_case(s, false);
        if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
        return out;
    }
    static std::string title(const std::string& s) {
        std::string out = s;
        bool start = true;
        for (auto& c : out) {
            const bool alpha = std::isalpha(static_cast<unsigned char>(c)) != 0;
            c = static_cast<char>(start ? std::toupper(static_cast<unsigned char>(c))
                                        : std::tolower(static_cast<unsigned char>(c)));
            start = !alpha;
        }
        return out;
    }
    static std::string replace_all(std::string s, const std::string& from, const std::string& to) {
        if (from.empty()) return s;
        for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
            s.replace(p, from.size(), to);
        return s;
    }
    static json py_split(const std::string& s, const std::optional<std::string>& sep, int64_t max_split,
                         Where where) {
        json parts = json::array();
        if (sep) {
            if (sep->empty()) throw RenderError{where, "split(): empty separator"};
            size_t start = 0;
            int64_t splits = 0;
            while (true) {
                const size_t p =
                    (max_split >= 0 && splits >= max_split) ? std::string::npos : s.find(*sep, start);
                if (p == std::string::npos) {
                    parts.push_back(s.substr(start));
                    return parts;
                }
                parts.push_back(s.substr(start, p - start));
                start = p + sep->size();
                ++splits;
            }
        }
        size_t i = 0;
        int64_t splits = 0;
        while (i < s.size()) {
            while (i < s.size() && is_py_space(s[i]))
                ++i;
            if (i >= s.size()) break;
            if (max_split >= 0 && splits >= max_split) {
                parts.push_back(py_strip(s.substr(i), std::nullopt, false, true));
                break;
            }
            size_t j = i;
            while (j < s.size() && !is_py_space(s[j]))
                ++j;
            parts.push_back(s.substr(i, j - i));
            ++splits;
            i = j;
        }
        return parts;
    }

    const json& context_;
    std::vector<std::map<std::string, Value>> scopes_;
};

}  // namespace

Result<std::string> render(const ChatTemplate& chat_template, const nlohmann::json& context) {
    return render_ordered(chat_template, nlohmann::ordered_json(context));
}

Result<std::string> render_ordered(const ChatTemplate& chat_template, const nlohmann::ordered_json& context) {
    if (!chat_template.body) return Result<std::string>::Error("chat template: not parsed");
    std::string out;
    try {
        Renderer renderer(context);
        renderer.run(chat_template.body->body, out);
    } catch (const RenderError& e) {
        return Result<std::string>::Error("chat template: line " + std::to_string(e.where.line) + " column " +
                                          std::to_string(e.where.column) + ": " + e.message);
    } catch (const BreakSignal&) {
        return Result<std::string>::Error("chat template: 'break' outside a loop");
    } catch (const ContinueSignal&) {
        return Result<std::string>::Error("chat template: 'continue' outside a loop");
    } catch (const nlohmann::json::exception& e) {
        return Result<std::string>::Error(std::string("chat template: ") + e.what());
    }
    return out;
}

}  // namespace slipway::chat
