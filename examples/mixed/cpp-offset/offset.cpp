// Adds 1 to every float the Rust node doubled, keeping its nulls and its `seq` metadata: Arrow
// arrays in and out through the Arrow C data interface, read where they lie in shared memory,
// with no Arrow library (a program with Arrow C++ would use arrow::ImportArray instead).
#include <nerve.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

// An Arrow float64 array that owns its values and validity bitmap.
struct Floats {
    std::vector<double> values;
    std::vector<uint8_t> validity;
    const void *buffers[2];
    std::string format = "g";

    // Hands the array over: nerve calls release once it is done with it.
    static void export_to(Floats *floats, int64_t nulls, ArrowArray *array, ArrowSchema *schema) {
        floats->buffers[0] = nulls ? floats->validity.data() : nullptr;
        floats->buffers[1] = floats->values.data();
        *array = ArrowArray{};
        array->length = static_cast<int64_t>(floats->values.size());
        array->null_count = nulls;
        array->n_buffers = 2;
        array->buffers = floats->buffers;
        array->private_data = floats;
        array->release = [](ArrowArray *self) {
            delete static_cast<Floats *>(self->private_data);
            self->release = nullptr;
        };
        *schema = ArrowSchema{};
        schema->format = floats->format.c_str();
        schema->name = "";
        schema->flags = ARROW_FLAG_NULLABLE;
        schema->release = [](ArrowSchema *self) { self->release = nullptr; };
    }
};

bool valid(const ArrowArray &array, int64_t i) {
    auto bitmap = static_cast<const uint8_t *>(array.buffers[0]);
    int64_t bit = array.offset + i;
    return bitmap == nullptr || (bitmap[bit / 8] >> (bit % 8)) & 1;
}

}  // namespace

int main() {
    try {
        nerve::Node node;
        int count = 0;
        for (nerve::Event &event : node) {
            if (event.type() != NERVE_EVENT_TYPE_INPUT) continue;
            ArrowArray in;
            ArrowSchema in_schema;
            event.arrow(&in, &in_schema);
            if (std::strcmp(in_schema.format, "g") != 0) {
                std::fprintf(stderr, "offset: expected float64 (`g`), got `%s`\n", in_schema.format);
                return 1;
            }
            auto values = static_cast<const double *>(in.buffers[1]) + in.offset;
            auto out = new Floats;
            out->values.resize(static_cast<size_t>(in.length));
            out->validity.assign(static_cast<size_t>((in.length + 7) / 8), 0);
            int64_t nulls = 0;
            for (int64_t i = 0; i < in.length; i++) {
                if (valid(in, i)) {
                    out->values[i] = values[i] + 1.0;
                    out->validity[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
                } else {
                    nulls++;
                }
            }
            in.release(&in);
            in_schema.release(&in_schema);
            ArrowArray array;
            ArrowSchema schema;
            Floats::export_to(out, nulls, &array, &schema);
            std::string seq = "{\"seq\": " + std::to_string(event.parameter_int("seq")) + "}";
            node.send("offset", &array, &schema, seq.c_str());
            schema.release(&schema);
            count++;
        }
        std::printf("offset %d arrays\n", count);
    } catch (const nerve::Error &e) {
        std::fprintf(stderr, "offset: %s\n", e.what());
        return 1;
    }
}
