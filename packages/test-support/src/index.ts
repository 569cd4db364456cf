export { bundleForAnotherUser } from './bundleForAnotherUser.ts';
