// What the C++ tests share: the nerve::Error a call throws.
#pragma once

#include <gtest/gtest.h>
#include <nerve.hpp>

// The nerve::Error `call` throws; a failure of the test when it throws none.
template <typename Call>
nerve::Error error_of(Call call) {
    try {
        call();
    } catch (const nerve::Error &e) {
        return e;
    }
    ADD_FAILURE() << "no nerve::Error thrown";
    return nerve::Error(0, "");
}
