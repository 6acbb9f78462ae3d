"""Transports adapt a wire (HTTP today; WebSocket and stdio later) to the protocol core."""
