/** Hosts only this machine can reach: a server bound to one may run without keys. */
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|\[::1\]|localhost)$/i;

export const isLoopbackHost = (host: string): boolean => LOOPBACK.test(host);
