export { runtimeValidator, agreement } from './runtimeValidator.ts';
export { testToolContext, toolErrorOf, NO_HOST } from './testToolContext.ts';
export { startFakeOpenAiServer } from './fakeOpenAiServer.ts';
export type { FakeOpenAiServer, FakeReply, FakeRequest } from './fakeOpenAiServer.ts';
export { startFakeBotApiServer } from './fakeBotApiServer.ts';
export type { FakeBotApiServer, ObservedPoll, SentMessage } from './fakeBotApiServer.ts';
export { startBotApiProxy } from './botApiProxy.ts';
export type { BotApiProxy, Interception } from './botApiProxy.ts';
