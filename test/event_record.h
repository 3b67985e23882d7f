// One event instance as a test records it inside its callback, where the instance is valid:
// which of the test's types it was, its timestamp and its elements (ibmsg_t_event_copy).
#pragma once

template <typename Type> struct EventRecord {
    Type type;
    long long ts;
    unsigned char data[64];
    // The elements as the event's element struct (core_ev_*_elems_t, world_ev_*_elems_t).
    template <typename T> const T &as() const
    {
        return *reinterpret_cast<const T *>(data);
    }
};
