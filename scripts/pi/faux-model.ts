// An offline model for tests that drive Pi 1.6 itself (RPC mode, prompts,
// tool calls): pi-ai's own faux provider, registered as provider "faux" with
// model "faux-1". No network, no API key. Load it per run:
//
//   "$NODE" .../dist/bundle/cli.js --mode rpc -e scripts/pi/faux-model.ts --model faux/faux-1
//
// Replies: "use tool NAME {JSON}" -> a call of tool NAME with those arguments;
// "use tool NAME WORD" -> a call of NAME with {query: WORD}; "use tool WORD"
// -> the same with NAME find_sessions; after a tool result ->
// "tool said: <result text>"; anything else -> "echo: <prompt text>".
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } from "@earendil-works/pi-ai";

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((b) => (b && typeof b.text === "string" ? b.text : "")).join("")
      : "";

export default function (pi: ExtensionAPI) {
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1", name: "Faux" }] });
  const reply = (context: { messages: { role: string; content?: unknown }[] }) => {
    const last = context.messages[context.messages.length - 1];
    if (last?.role === "toolResult") return fauxAssistantMessage(`tool said: ${textOf(last.content)}`);
    const text = textOf(last?.content);
    const m = /^use tool (\S+)(?: (.+))?$/s.exec(text);
    if (m) {
      const [name, rest] = m[2] ? [m[1], m[2].trim()] : ["find_sessions", m[1]];
      const args = rest.startsWith("{") ? JSON.parse(rest) : { query: rest };
      return fauxAssistantMessage([fauxText("calling"), fauxToolCall(name, args)], { stopReason: "toolUse" });
    }
    return fauxAssistantMessage(`echo: ${text}`);
  };
  // The faux provider consumes one queued step per model call; queue plenty.
  faux.setResponses(Array.from({ length: 10000 }, () => reply));
  pi.registerProvider(faux.provider);
}
