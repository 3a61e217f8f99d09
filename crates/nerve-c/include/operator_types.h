/*
 * operator_types.h: the types of dora-rs's C operator API (operator_api.h), with dora's layout,
 * so that a dora C or C++ operator builds against nerve by changing its include path and
 * library only. Input_t and SendOutput_t are opaque: an operator passes them back as it gets
 * them.
 */
#ifndef NERVE_OPERATOR_TYPES_H
#define NERVE_OPERATOR_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes nerve allocated for the operator: free them with the function that says so. */
typedef struct Vec_uint8 {
    uint8_t *ptr;
    size_t len;
    size_t cap;
} Vec_uint8_t;

/* Success when error is NULL; else error holds the failure's UTF-8 text. */
typedef struct DoraResult {
    Vec_uint8_t *error;
} DoraResult_t;

/* What dora_init_operator returns: its result and the operator's state, given back to every
 * dora_on_event and to dora_drop_operator. */
typedef struct DoraInitResult {
    DoraResult_t result;
    void *operator_context;
} DoraInitResult_t;

/* What dora_on_event returns besides its result: go on, stop this operator, or stop every
 * operator of the node. */
enum DoraStatus {
    DORA_STATUS_CONTINUE = 0,
    DORA_STATUS_STOP = 1,
    DORA_STATUS_STOP_ALL = 2,
};
typedef uint8_t DoraStatus_t;

typedef struct OnEventResult {
    DoraResult_t result;
    DoraStatus_t status;
} OnEventResult_t;

/* One input message: read it with dora_read_input_id and dora_read_data. */
typedef struct Input Input_t;

/* One event, of one kind: an input message (input is not NULL), an input closed (input_closed
 * holds its id, not NUL-terminated), the dataflow stopping (stop), or an error (error holds
 * its text). The event and what it points to live until dora_on_event returns. */
typedef struct RawEvent {
    Input_t *input;
    Vec_uint8_t input_closed;
    bool stop;
    Vec_uint8_t error;
} RawEvent_t;

/* How dora_send_operator_output reaches nerve. */
typedef struct SendOutput SendOutput_t;

/* The functions' types, as dora names them. */
typedef struct DoraInitOperator {
    DoraInitResult_t (*init_operator)(void);
} DoraInitOperator_t;

typedef struct DoraDropOperator {
    DoraResult_t (*drop_operator)(void *);
} DoraDropOperator_t;

typedef struct DoraOnEvent {
    OnEventResult_t (*on_event)(RawEvent_t *, SendOutput_t const *, void *);
} DoraOnEvent_t;

/* The input's id: a copy, NUL-terminated, to free with dora_free_input_id; NULL for a NULL
 * input. */
char *dora_read_input_id(Input_t const *input);

/* Frees what dora_read_input_id returned; NULL does nothing. */
void dora_free_input_id(char *input_id);

/* A copy of the message's bytes, to free with dora_free_data. Its ptr is NULL when the
 * message is not a UInt8 array (bytes), as in dora, or the input is NULL. */
Vec_uint8_t dora_read_data(Input_t *input);

/* Frees what dora_read_data returned. */
void dora_free_data(Vec_uint8_t data);

/* Sends data_len bytes at data_ptr (NULL with 0 sends an empty message) on the operator's
 * output id. On failure, the result's error says why. */
DoraResult_t dora_send_operator_output(SendOutput_t const *send_output, char const *id, uint8_t const *data_ptr,
                                       size_t data_len);

/* nerve's addition: frees a result's error. An operator that handles a failed send itself,
 * rather than returning its result, frees the error with it; NULL does nothing. */
void nerve_dora_free_error(Vec_uint8_t *error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NERVE_OPERATOR_TYPES_H */
