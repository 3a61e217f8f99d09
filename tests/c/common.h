// What the C API's GoogleTest programs share: a status check that shows nerve's message, names
// no other test uses, and the Arrow arrays they build by hand.
#pragma once

#include <gtest/gtest.h>
#include <nerve.h>

#include <spawn.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

inline std::string last_error() { return nerve_last_error(); }

// The call returns `status`, and nerve's message names each of the parts given.
#define EXPECT_STATUS(call, status, ...)                                                  \
    do {                                                                                  \
        int got_ = (call);                                                                \
        EXPECT_EQ(got_, (status)) << nerve_status_name(got_) << ": " << last_error();     \
        for (const char *part : std::vector<const char *>{__VA_ARGS__})                   \
            EXPECT_NE(last_error().find(part), std::string::npos)                         \
                << "`" << part << "` not in: " << last_error();                           \
    } while (0)

#define ASSERT_OK(call) ASSERT_EQ((call), NERVE_STATUS_OK) << last_error()

// A name of this process alone: tests of several processes run at once.
inline std::string unique(const std::string &base) { return base + "_" + std::to_string(getpid()); }

// A pointer to memory that was freed, as a handle the caller already freed is: nerve must
// refuse it by its registry, without reading through it.
template <typename T>
T *freed_pointer() {
    void *block = std::malloc(64);
    auto address = reinterpret_cast<std::uintptr_t>(block);
    std::free(block);
    return reinterpret_cast<T *>(address);
}

// An int64 Arrow array over the caller's values, built by hand (no Arrow library): its release
// callback counts, so a test sees when nerve lets go of the caller's memory.
struct HandMadeInt64 {
    std::vector<int64_t> values;
    const void *buffers[2] = {nullptr, nullptr};
    int releases = 0;

    ArrowArray array() {
        buffers[1] = values.data();
        ArrowArray a{};
        a.length = static_cast<int64_t>(values.size());
        a.n_buffers = 2;
        a.buffers = buffers;
        a.release = [](ArrowArray *self) {
            static_cast<HandMadeInt64 *>(self->private_data)->releases++;
            self->release = nullptr;
        };
        a.private_data = this;
        return a;
    }

    static ArrowSchema schema() {
        ArrowSchema s{};
        s.format = "l";
        s.name = "";
        s.release = [](ArrowSchema *self) { self->release = nullptr; };
        return s;
    }
};

// The value of an event as bytes.
inline std::string event_bytes(const nerve_event *event) {
    const uint8_t *data = nullptr;
    size_t len = 0;
    EXPECT_EQ(nerve_event_bytes(event, &data, &len), NERVE_STATUS_OK) << last_error();
    return len ? std::string(reinterpret_cast<const char *>(data), len) : std::string();
}

// Runs this program again, as the test `filter` only, with `variable=value` in its environment:
// the other process of a test of two. Returns its pid (0 if it cannot start).
inline pid_t spawn_self(const char *filter, const char *variable, const std::string &value) {
    extern char **environ;
    std::string env = std::string(variable) + "=" + value;
    std::vector<char *> envp;
    for (char **e = environ; *e; e++) envp.push_back(*e);
    envp.push_back(env.data());
    envp.push_back(nullptr);
    std::string filter_arg = std::string("--gtest_filter=") + filter;
    char self[] = "/proc/self/exe";
    char *argv[] = {self, filter_arg.data(), nullptr};
    pid_t pid = 0;
    return posix_spawn(&pid, self, nullptr, nullptr, argv, envp.data()) == 0 ? pid : 0;
}

// Waits for process `pid` and says whether it exited with status 0.
inline bool exited_well(pid_t pid) {
    int status = 0;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
