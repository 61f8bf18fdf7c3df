/**
 * A LangChain chat model double whose every answer comes from a script: it reads the messages a
 * LangChain.js agent sends (the human and system texts, the tool results) and answers with the
 * script's next tool call as an `AIMessage` with `tool_calls`, or with a text. LangChain's own fake
 * models answer from a fixed list, and these flows need answers read from the tool results.
 *
 * It is a named double for the model only; the framework, the MCP server and Sess are real. Every
 * request is logged in a {@link StandInLog}, as the HTTP stand-ins log theirs.
 */
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { nextStep, type ScriptInput, type ScriptStep } from './script.js';
import type { StandInLog } from './stand-in-log.js';

/** A message's content as text (a block that is not text as its JSON). */
export function contentText(content: BaseMessage['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((block) => {
      const b = block as { type?: string; text?: string };
      return b.type === 'text' ? (b.text ?? '') : JSON.stringify(block);
    })
    .join('\n');
}

/** A chat model double whose every answer comes from `next` (the host matrix's script by default). */
export class ScriptedChatModel extends BaseChatModel {
  private tools: StructuredToolInterface[] = [];

  constructor(
    private readonly log: StandInLog,
    private readonly next: (input: ScriptInput) => ScriptStep = nextStep,
  ) {
    super({});
  }

  _llmType(): string {
    return 'scripted';
  }

  override bindTools(tools: StructuredToolInterface[]): this {
    const bound = new ScriptedChatModel(this.log, this.next);
    bound.tools = tools;
    return bound as this;
  }

  async _generate(
    messages: BaseMessage[],
    _options: this['ParsedCallOptions'],
    _run?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    const texts: string[] = [];
    const toolResults: string[] = [];
    for (const message of messages) {
      const type = message.getType();
      if (type === 'tool') toolResults.push(contentText(message.content));
      else if (type === 'human' || type === 'system') texts.push(contentText(message.content));
    }
    const toolNames = this.tools.map((t) => t.name);
    const step = this.next({ promptText: texts.join('\n'), toolNames, toolResults });
    this.log.requests.push({
      api: '_generate',
      body: JSON.stringify({
        messages: messages.map((m) => ({ type: m.getType(), content: m.content })),
        tools: this.tools.map((t) => ({ name: t.name, description: t.description })),
      }),
      toolNames,
      toolResults,
      step,
    });
    const message =
      step.kind === 'tool'
        ? new AIMessage({
            content: '',
            tool_calls: [
              {
                id: `call_${this.log.requests.length}`,
                name: step.name,
                args: step.arguments,
                type: 'tool_call',
              },
            ],
          })
        : new AIMessage(step.text);
    return { generations: [{ message, text: step.kind === 'text' ? step.text : '' }] };
  }
}
