// The simulated robot: one vertical axis pressing a tool onto a compliant surface, and the force
// sensor between them. Both robots of this loop include it (robot.cpp over nerve,
// benches/control-loop/robot_zmq.cpp over ZeroMQ), so they move the same way whatever carries
// their messages.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

// A foam-like surface under a 1 kg tool: the contact rings at about 22 Hz and is damped to a
// third of critical, so a controller that answers late shows it.
struct PlantParameters {
    double mass_kg = 1.0;
    double gravity_m_per_s2 = 9.81;        // the tool's weight: the bias the controller's I term removes
    double stiffness_n_per_m = 20000.0;    // the surface, where the tool presses into it
    double damping_n_s_per_m = 100.0;
    double joint_friction_n_s_per_m = 5.0;
    double sensor_noise_n = 0.1;           // standard deviation of a reading
    uint64_t seed = 1;                     // the same noise on every run
};

class Plant {
   public:
    explicit Plant(PlantParameters parameters = {})
        : p_(parameters), noise_generator_(parameters.seed), noise_(0.0, parameters.sensor_noise_n) {}

    // Moves the tool for `seconds` under the motor's force `command_n` (positive: into the
    // surface). The contact is stiff, so the step is taken in ten small ones.
    void step(double command_n, double seconds) {
        constexpr int SUBSTEPS = 10;
        const double h = seconds / SUBSTEPS;
        for (int i = 0; i < SUBSTEPS; i++) {
            double net_n = command_n + p_.mass_kg * p_.gravity_m_per_s2 - contact_force_n() -
                           p_.joint_friction_n_s_per_m * speed_m_per_s_;
            speed_m_per_s_ += net_n / p_.mass_kg * h;  // semi-implicit Euler: stable on a spring
            depth_m_ += speed_m_per_s_ * h;
        }
    }

    // The force the surface pushes back with: none out of contact, and a surface never pulls.
    double contact_force_n() const {
        if (depth_m_ <= 0.0) return 0.0;
        return std::max(0.0, p_.stiffness_n_per_m * depth_m_ + p_.damping_n_s_per_m * speed_m_per_s_);
    }

    // What the force sensor reads now: the contact force and its noise.
    double sensor_reading_n() { return contact_force_n() + noise_(noise_generator_); }

   private:
    PlantParameters p_;
    std::mt19937_64 noise_generator_;
    std::normal_distribution<double> noise_;
    double depth_m_ = 0.0;  // how far the tool is pressed into the surface; it starts touching it
    double speed_m_per_s_ = 0.0;
};
