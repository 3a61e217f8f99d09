// nerve/msg.hpp: typed ROS 2 messages in C++17, header-only over nerve.hpp. See docs/c-cpp.md.
//
// A message type is a plain struct generated from its interface file (`nerve types cpp`; the
// packages nerve ships are installed generated: #include <nerve/msg/sensor_msgs.hpp>), spelled
// as in ROS 2 under nerve::msg (nerve::msg::sensor_msgs::msg::Image). Its value travels as the
// Arrow struct a Python or Rust node of the same type sends and reads, through the Arrow C data
// interface, with no Arrow library:
//
//   nerve::msg::send(node, "image", image);                        // or send(publisher, image)
//   auto image = nerve::msg::read<sensor_msgs::msg::Image>(event);  // checks the layout
//
// Numbers in sequences (`uint8[] data`, `float32[] ranges`) are nerve::msg::Sequence: a received
// one points into the shared memory the message arrived in, not a copy, and keeps it alive; one
// to send is a std::vector the struct owns, handed to nerve as it is (copied once, into shared
// memory). A value whose layout is not the type's (another type, a missing field) throws
// nerve::Error with NERVE_STATUS_WRONG_TYPE naming the field.
#ifndef NERVE_MSG_HPP
#define NERVE_MSG_HPP

#include <nerve.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace nerve::msg {

// The numbers of a sequence field: owned, or borrowed from a received message's shared memory
// (which it keeps alive). Read like a std::span; mutable_values() gives a vector to change.
template <typename T>
class Sequence {
   public:
    using value_type = T;

    Sequence() = default;
    Sequence(std::vector<T> values) : owned_(std::move(values)) {}  // NOLINT: a vector is a sequence
    Sequence(std::initializer_list<T> values) : owned_(values) {}
    // `size` values at `data`, kept valid by `keep` (or by the caller, when it is null).
    Sequence(const T *data, size_t size, std::shared_ptr<const void> keep)
        : data_(data), size_(size), keep_(std::move(keep)), borrowed_(true) {}

    const T *data() const noexcept { return borrowed_ ? data_ : owned_.data(); }
    size_t size() const noexcept { return borrowed_ ? size_ : owned_.size(); }
    bool empty() const noexcept { return size() == 0; }
    const T *begin() const noexcept { return data(); }
    const T *end() const noexcept { return data() + size(); }
    const T &operator[](size_t i) const noexcept { return data()[i]; }
    // Whether the values are a received message's shared memory rather than a copy.
    bool borrowed() const noexcept { return borrowed_; }
    // The values as a vector to change; borrowed ones are copied into it first.
    std::vector<T> &mutable_values() {
        if (borrowed_) {
            owned_.assign(data_, data_ + size_);
            keep_.reset();
            borrowed_ = false;
        }
        return owned_;
    }
    friend bool operator==(const Sequence &a, const Sequence &b) {
        return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
    }
    friend bool operator!=(const Sequence &a, const Sequence &b) { return !(a == b); }

   private:
    std::vector<T> owned_;
    const T *data_ = nullptr;
    size_t size_ = 0;
    std::shared_ptr<const void> keep_;
    bool borrowed_ = false;
};

// One field of a message type: its name in the Arrow struct and its member.
template <typename M, typename F>
struct Field {
    const char *name;
    F M::*member;
};
template <typename M, typename F>
constexpr Field<M, F> field(const char *name, F M::*member) {
    return {name, member};
}

namespace detail {

template <typename T, typename = void>
struct is_message : std::false_type {};
template <typename T>
struct is_message<T, std::void_t<decltype(T::nerve_fields())>> : std::true_type {};
template <typename T>
struct is_sequence : std::false_type {};
template <typename T>
struct is_sequence<Sequence<T>> : std::true_type {};
template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
template <typename T>
struct is_array : std::false_type {};
template <typename T, size_t N>
struct is_array<std::array<T, N>> : std::true_type {};

// The Arrow C data interface format of a number.
template <typename T>
constexpr const char *number_format() {
    if constexpr (std::is_same_v<T, bool>) return "b";
    else if constexpr (std::is_same_v<T, int8_t>) return "c";
    else if constexpr (std::is_same_v<T, uint8_t>) return "C";
    else if constexpr (std::is_same_v<T, int16_t>) return "s";
    else if constexpr (std::is_same_v<T, uint16_t>) return "S";
    else if constexpr (std::is_same_v<T, int32_t>) return "i";
    else if constexpr (std::is_same_v<T, uint32_t>) return "I";
    else if constexpr (std::is_same_v<T, int64_t>) return "l";
    else if constexpr (std::is_same_v<T, uint64_t>) return "L";
    else if constexpr (std::is_same_v<T, float>) return "f";
    else if constexpr (std::is_same_v<T, double>) return "g";
    else static_assert(sizeof(T) == 0, "not a ROS 2 number type");
}

[[noreturn]] inline void wrong(const std::string &path, const std::string &problem) {
    throw Error(NERVE_STATUS_WRONG_TYPE, (path.empty() ? std::string("the value") : "field `" + path + "`") + ": " + problem);
}

// Sizes in a list or string of an Arrow value are 32-bit offsets.
inline int32_t offset(size_t n, const std::string &path) {
    if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
        throw Error(NERVE_STATUS_TOO_LARGE, "field `" + path + "`: more than 2^31 - 1 elements or bytes");
    return static_cast<int32_t>(n);
}

// Everything one exported value points to. Each exported struct (the root and every child,
// array or schema) holds a reference, dropped by its release: what a consumer moves out of the
// value stays valid after the rest is released, as the C data interface asks.
struct Arena {
    std::deque<std::vector<uint8_t>> bytes;
    std::deque<std::vector<const void *>> buffer_lists;
    std::deque<std::vector<ArrowArray *>> array_lists;
    std::deque<std::vector<ArrowSchema *>> schema_lists;
    std::deque<ArrowArray> arrays;
    std::deque<ArrowSchema> schemas;
    std::deque<std::string> texts;
};

inline void release_array(ArrowArray *array) {
    for (int64_t i = 0; i < array->n_children; i++)
        if (array->children[i]->release != nullptr) array->children[i]->release(array->children[i]);
    delete static_cast<std::shared_ptr<Arena> *>(array->private_data);
    array->release = nullptr;
}

inline void release_schema(ArrowSchema *schema) {
    for (int64_t i = 0; i < schema->n_children; i++)
        if (schema->children[i]->release != nullptr) schema->children[i]->release(schema->children[i]);
    delete static_cast<std::shared_ptr<Arena> *>(schema->private_data);
    schema->release = nullptr;
}

// A column of an exported value: its array and its schema.
struct Column {
    ArrowArray *array;
    ArrowSchema *schema;
};

// Writes message values as Arrow columns, a column per field, recursively.
class Exporter {
   public:
    Exporter() : arena_(std::make_shared<Arena>()) {}

    // `rows` as a column named `name`; `path` names the field in errors.
    template <typename T>
    Column column(const char *name, const std::vector<const T *> &rows, const std::string &path) {
        const size_t n = rows.size();
        if constexpr (std::is_same_v<T, bool>) {
            std::vector<uint8_t> bits((n + 7) / 8, 0);
            for (size_t i = 0; i < n; i++)
                if (*rows[i]) bits[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
            return {array(n, {nullptr, own(std::move(bits))}, {}), schema("b", name, {})};
        } else if constexpr (std::is_arithmetic_v<T>) {
            std::vector<uint8_t> bytes(n * sizeof(T));
            for (size_t i = 0; i < n; i++) std::memcpy(bytes.data() + i * sizeof(T), rows[i], sizeof(T));
            return {array(n, {nullptr, own(std::move(bytes))}, {}), schema(number_format<T>(), name, {})};
        } else if constexpr (std::is_same_v<T, std::string>) {
            std::vector<int32_t> offsets(n + 1, 0);
            std::vector<uint8_t> text;
            for (size_t i = 0; i < n; i++) {
                text.insert(text.end(), rows[i]->begin(), rows[i]->end());
                offsets[i + 1] = offset(text.size(), path);
            }
            return {array(n, {nullptr, own(std::move(offsets)), own(std::move(text))}, {}), schema("u", name, {})};
        } else if constexpr (is_sequence<T>::value || is_vector<T>::value) {
            using E = typename T::value_type;
            std::vector<int32_t> offsets(n + 1, 0);
            for (size_t i = 0; i < n; i++) offsets[i + 1] = offset(offsets[i] + rows[i]->size(), path);
            Column items = sequence_items<T, E>(rows, static_cast<size_t>(offsets[n]), path);
            return {array(n, {nullptr, own(std::move(offsets))}, {items.array}), schema("+l", name, {items.schema})};
        } else if constexpr (is_array<T>::value) {
            using E = typename T::value_type;
            constexpr size_t N = std::tuple_size<T>::value;
            Column items;
            if constexpr (std::is_same_v<E, bool>) {
                std::vector<uint8_t> bits((n * N + 7) / 8, 0);
                for (size_t i = 0; i < n * N; i++)
                    if ((*rows[i / N])[i % N]) bits[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
                items = {array(n * N, {nullptr, own(std::move(bits))}, {}), schema("b", "item", {})};
            } else {
                std::vector<const E *> elements;
                elements.reserve(n * N);
                for (const T *row : rows)
                    for (const E &e : *row) elements.push_back(&e);
                items = column<E>("item", elements, path + "[]");
            }
            return {array(n, {nullptr}, {items.array}),
                    schema("+w:" + std::to_string(N), name, {items.schema})};
        } else {
            static_assert(is_message<T>::value, "not a ROS 2 field type");
            std::vector<ArrowArray *> arrays;
            std::vector<ArrowSchema *> schemas;
            std::apply(
                [&](const auto &...fields) {
                    (add_field(fields, rows, path, arrays, schemas), ...);
                },
                T::nerve_fields());
            return {array(n, {nullptr}, std::move(arrays)), schema("+s", name, std::move(schemas))};
        }
    }

    // Hands the column over as the caller's root structs.
    void finish(const Column &root, ArrowArray *array_out, ArrowSchema *schema_out) {
        *array_out = *root.array;
        *schema_out = *root.schema;
    }

   private:
    template <typename T, typename E>
    Column sequence_items(const std::vector<const T *> &rows, size_t total, const std::string &path) {
        if constexpr (std::is_same_v<E, bool>) {
            std::vector<uint8_t> bits((total + 7) / 8, 0);
            size_t i = 0;
            for (const T *row : rows)
                for (bool b : *row) {
                    if (b) bits[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
                    i++;
                }
            return {array(total, {nullptr, own(std::move(bits))}, {}), schema("b", "item", {})};
        } else if constexpr (std::is_arithmetic_v<E>) {
            // One message's numbers are handed over where they are (nerve copies them once, into
            // shared memory, before the send returns); several are gathered.
            const void *values;
            if (rows.size() == 1 && total > 0) {
                values = rows[0]->data();
            } else {
                std::vector<uint8_t> bytes(total * sizeof(E));
                size_t at = 0;
                for (const T *row : rows) {
                    if (row->size() > 0) std::memcpy(bytes.data() + at, row->data(), row->size() * sizeof(E));
                    at += row->size() * sizeof(E);
                }
                values = own(std::move(bytes));
            }
            return {array(total, {nullptr, values}, {}), schema(number_format<E>(), "item", {})};
        } else {
            std::vector<const E *> elements;
            elements.reserve(total);
            for (const T *row : rows)
                for (const E &e : *row) elements.push_back(&e);
            return column<E>("item", elements, path + "[]");
        }
    }

    template <typename M, typename F>
    void add_field(const Field<M, F> &field, const std::vector<const M *> &rows, const std::string &path,
                   std::vector<ArrowArray *> &arrays, std::vector<ArrowSchema *> &schemas) {
        std::vector<const F *> values;
        values.reserve(rows.size());
        for (const M *row : rows) values.push_back(&(row->*field.member));
        Column c = column<F>(field.name, values, path.empty() ? field.name : path + "." + field.name);
        arrays.push_back(c.array);
        schemas.push_back(c.schema);
    }

    // Keeps `bytes` for as long as the value lives; never a null pointer, which the C data
    // interface does not allow for a buffer of an array that has one.
    template <typename B>
    const void *own(std::vector<B> values) {
        static constexpr uint64_t none = 0;
        if (values.empty()) return &none;
        std::vector<uint8_t> &kept = arena_->bytes.emplace_back(values.size() * sizeof(B));
        std::memcpy(kept.data(), values.data(), kept.size());
        return kept.data();
    }
    const void *own(std::vector<uint8_t> &&bytes) {
        static constexpr uint64_t none = 0;
        if (bytes.empty()) return &none;
        return arena_->bytes.emplace_back(std::move(bytes)).data();
    }

    ArrowArray *array(size_t length, std::vector<const void *> buffers, std::vector<ArrowArray *> children) {
        ArrowArray &a = arena_->arrays.emplace_back();
        a = ArrowArray{};
        a.length = static_cast<int64_t>(length);
        std::vector<const void *> &b = arena_->buffer_lists.emplace_back(std::move(buffers));
        a.n_buffers = static_cast<int64_t>(b.size());
        a.buffers = b.data();
        std::vector<ArrowArray *> &c = arena_->array_lists.emplace_back(std::move(children));
        a.n_children = static_cast<int64_t>(c.size());
        a.children = c.empty() ? nullptr : c.data();
        a.private_data = new std::shared_ptr<Arena>(arena_);
        a.release = release_array;
        return &a;
    }

    ArrowSchema *schema(std::string format, const char *name, std::vector<ArrowSchema *> children) {
        ArrowSchema &s = arena_->schemas.emplace_back();
        s = ArrowSchema{};
        s.format = arena_->texts.emplace_back(std::move(format)).c_str();
        s.name = arena_->texts.emplace_back(name).c_str();
        std::vector<ArrowSchema *> &c = arena_->schema_lists.emplace_back(std::move(children));
        s.n_children = static_cast<int64_t>(c.size());
        s.children = c.empty() ? nullptr : c.data();
        s.private_data = new std::shared_ptr<Arena>(arena_);
        s.release = release_schema;
        return &s;
    }

    std::shared_ptr<Arena> arena_;
};

inline bool bit(const ArrowArray &a, int64_t i) {
    return (static_cast<const uint8_t *>(a.buffers[1])[i / 8] >> (i % 8)) & 1;
}

inline void expect_format(const ArrowSchema &s, const char *format, const std::string &path) {
    if (std::strcmp(s.format, format) != 0)
        wrong(path, std::string("expected Arrow format `") + format + "`, got `" + s.format + "`");
}

inline void expect_children(const ArrowArray &a, const ArrowSchema &s, int64_t n, const std::string &path) {
    if (a.n_children != n || s.n_children != n || a.n_buffers < 1)
        wrong(path, "the value has " + std::to_string(a.n_children) + " children, the type " + std::to_string(n));
}

template <typename M, typename F>
void read_field(const ArrowArray &a, const ArrowSchema &s, int64_t at, const Field<M, F> &field, M &out,
                const std::shared_ptr<const void> &keep, const std::string &path);

// Row `row` of column `a` (described by `s`) into `out`; `keep` keeps the value alive for what
// borrows it.
template <typename T>
void read(const ArrowArray &a, const ArrowSchema &s, int64_t row, T &out, const std::shared_ptr<const void> &keep,
          const std::string &path) {
    const int64_t at = a.offset + row;
    if constexpr (std::is_same_v<T, bool>) {
        expect_format(s, "b", path);
        out = bit(a, at);
    } else if constexpr (std::is_arithmetic_v<T>) {
        expect_format(s, number_format<T>(), path);
        out = static_cast<const T *>(a.buffers[1])[at];
    } else if constexpr (std::is_same_v<T, std::string>) {
        expect_format(s, "u", path);
        auto offsets = static_cast<const int32_t *>(a.buffers[1]);
        out.assign(static_cast<const char *>(a.buffers[2]) + offsets[at], static_cast<size_t>(offsets[at + 1] - offsets[at]));
    } else if constexpr (is_sequence<T>::value || is_vector<T>::value) {
        using E = typename T::value_type;
        expect_format(s, "+l", path);
        expect_children(a, s, 1, path);
        auto offsets = static_cast<const int32_t *>(a.buffers[1]);
        const int64_t first = offsets[at], count = offsets[at + 1] - offsets[at];
        const ArrowArray &items = *a.children[0];
        const ArrowSchema &item_schema = *s.children[0];
        if constexpr (is_sequence<T>::value) {
            expect_format(item_schema, number_format<E>(), path + "[]");
            out = T(static_cast<const E *>(items.buffers[1]) + items.offset + first, static_cast<size_t>(count), keep);
        } else {
            out.resize(static_cast<size_t>(count));
            for (int64_t i = 0; i < count; i++) {
                E element{};
                detail::read(items, item_schema, first + i, element, keep, path + "[]");
                out[static_cast<size_t>(i)] = std::move(element);
            }
        }
    } else if constexpr (is_array<T>::value) {
        constexpr int64_t N = static_cast<int64_t>(std::tuple_size<T>::value);
        expect_format(s, ("+w:" + std::to_string(N)).c_str(), path);
        expect_children(a, s, 1, path);
        for (int64_t i = 0; i < N; i++) detail::read(*a.children[0], *s.children[0], at * N + i, out[static_cast<size_t>(i)], keep, path + "[]");
    } else {
        static_assert(is_message<T>::value, "not a ROS 2 field type");
        expect_format(s, "+s", path);
        std::apply([&](const auto &...fields) { (read_field(a, s, at, fields, out, keep, path), ...); }, T::nerve_fields());
    }
}

template <typename M, typename F>
void read_field(const ArrowArray &a, const ArrowSchema &s, int64_t at, const Field<M, F> &field, M &out,
                const std::shared_ptr<const void> &keep, const std::string &path) {
    const std::string here = path.empty() ? field.name : path + "." + field.name;
    for (int64_t i = 0; i < s.n_children && i < a.n_children; i++)
        if (s.children[i]->name != nullptr && std::strcmp(s.children[i]->name, field.name) == 0)
            return detail::read(*a.children[i], *s.children[i], at, out.*field.member, keep, here);
    wrong(here, "the value has no such field");
}

}  // namespace detail

// `message` as the Arrow value of its type (a struct array of one row), in `array` and `schema`,
// both the caller's to release. Its sequences of numbers are pointed to, not copied: the array
// is valid while `message` lives unchanged.
template <typename M>
void to_arrow(const M &message, ArrowArray *array, ArrowSchema *schema) {
    static_assert(detail::is_message<M>::value, "not a message type (see nerve types cpp)");
    detail::Exporter exporter;
    exporter.finish(exporter.column<M>("", {&message}, ""), array, schema);
}

// The message in row `row` of an Arrow value (the caller's to release, untouched) described by
// `schema`; its sequences of numbers borrow the value's memory through `keep`.
template <typename M>
M from_arrow(const ArrowArray &array, const ArrowSchema &schema, int64_t row, std::shared_ptr<const void> keep) {
    static_assert(detail::is_message<M>::value, "not a message type (see nerve types cpp)");
    if (row < 0 || row >= array.length)
        throw Error(NERVE_STATUS_WRONG_TYPE, std::string(M::TYPE_NAME) + ": the value has " +
                                                 std::to_string(array.length) + " rows, not row " + std::to_string(row));
    M out;
    try {
        detail::read(array, schema, row, out, keep, "");
    } catch (const Error &e) {
        throw Error(e.status(), std::string(M::TYPE_NAME) + ": " + e.what());
    }
    return out;
}

// The message an event carries, checked against the type; its sequences of numbers point into
// the event's shared memory and keep it alive, even after the event is freed.
template <typename M>
M read(const EventView &event) {
    auto array = std::shared_ptr<ArrowArray>(new ArrowArray{}, [](ArrowArray *a) {
        if (a->release != nullptr) a->release(a);
        delete a;
    });
    ArrowSchema schema{};
    event.arrow(array.get(), &schema);
    ::nerve::detail::ReleaseSchema release{&schema};
    return from_arrow<M>(*array, schema, 0, array);
}

namespace detail {

// Calls `send(&array, &schema)` with `message` exported; the schema is released after.
template <typename M, typename Send>
void send_exported(const M &message, Send send) {
    ArrowArray array;
    ArrowSchema schema;
    to_arrow(message, &array, &schema);
    ::nerve::detail::ReleaseSchema release{&schema};
    send(&array, &schema);
}

}  // namespace detail

// Sends `message` on a node's output (declared with its type, or untyped).
template <typename M>
void send(Node &node, std::string_view output, const M &message, const char *parameters_json = nullptr) {
    detail::send_exported(message, [&](ArrowArray *array, ArrowSchema *schema) {
        node.send(output, array, schema, parameters_json);
    });
}

// Publishes `message` on a topic.
template <typename M>
void send(Publisher &publisher, const M &message, const char *parameters_json = nullptr) {
    detail::send_exported(message, [&](ArrowArray *array, ArrowSchema *schema) {
        publisher.send(array, schema, parameters_json);
    });
}

}  // namespace nerve::msg

#endif  // NERVE_MSG_HPP
