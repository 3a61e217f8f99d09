// nerve/arrow.hpp: nerve.hpp with Arrow C++, for programs that have it (its headers on the
// include path, libarrow linked): values in and out as arrow::Array, through the Arrow C data
// interface, zero-copy on the way in. See docs/c-cpp.md.
#ifndef NERVE_ARROW_HPP
#define NERVE_ARROW_HPP

#include <arrow/api.h>
#include <arrow/c/bridge.h>
#include <nerve.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace nerve::arrow {

namespace detail {

// Throws a failed Arrow status as nerve::Error (NERVE_STATUS_INVALID_ARGUMENT: what Arrow C++
// refused is the value it was given).
inline void check(const ::arrow::Status &status, const char *what) {
    if (!status.ok()) throw Error(NERVE_STATUS_INVALID_ARGUMENT, std::string(what) + ": " + status.ToString());
}

// Calls `send(&c_array, &c_schema)` with `array` exported; the schema is released after.
template <typename Send>
void send_exported(const ::arrow::Array &array, Send send) {
    ArrowArray c_array;
    ArrowSchema c_schema;
    check(::arrow::ExportArray(array, &c_array, &c_schema), "arrow::ExportArray");
    ::nerve::detail::ReleaseSchema release{&c_schema};
    send(&c_array, &c_schema);
}

}  // namespace detail

// The event's value as an Arrow C++ array over the shared memory it arrived in: no copy, and it
// keeps that memory alive after the event is freed.
inline std::shared_ptr<::arrow::Array> import(const EventView &event) {
    ArrowArray array;
    ArrowSchema schema;
    event.arrow(&array, &schema);
    ::arrow::Result<std::shared_ptr<::arrow::Array>> imported = ::arrow::ImportArray(&array, &schema);
    detail::check(imported.status(), "arrow::ImportArray");
    return *imported;
}

// Sends `array` on a node's output (its buffers are copied once, into shared memory).
inline void send(Node &node, std::string_view output, const ::arrow::Array &array,
                 const char *parameters_json = nullptr) {
    detail::send_exported(array, [&](ArrowArray *c_array, ArrowSchema *c_schema) {
        node.send(output, c_array, c_schema, parameters_json);
    });
}

// Publishes `array` on a topic (its buffers are copied once, into shared memory).
inline void send(Publisher &publisher, const ::arrow::Array &array, const char *parameters_json = nullptr) {
    detail::send_exported(array, [&](ArrowArray *c_array, ArrowSchema *c_schema) {
        publisher.send(c_array, c_schema, parameters_json);
    });
}

}  // namespace nerve::arrow

#endif  // NERVE_ARROW_HPP
