// The floor's "plugin": one function, imported on the floor's first call (see peer.mjs).
export const echo = (input) => input;
