#include "engine/chat/builtin_templates.h"

namespace weir::chat_builtin {

const char* const kGemma = R"JINJA({#- Weir's built-in Gemma template. Gemma has no system role: the system
    text, then a blank line, opens the first user turn. Turns must alternate
    user / model, starting with user. -#}
{%- macro content_text(content) -%}
    {%- if content is string -%}
        {{- content | trim -}}
    {%- else -%}
        {%- for part in content -%}
            {%- if part.type == 'text' -%}{{- part.text | trim -}}
            {%- elif part.type == 'image' -%}{{- '<start_of_image>' -}}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro -%}
{{- bos_token -}}
{%- set turns = messages -%}
{%- set system_text = '' -%}
{%- if messages | length > 0 and messages[0].role == 'system' -%}
    {%- set first = messages[0].content -%}
    {%- set system_text = (first if first is string else first[0].text) ~ '\n\n' -%}
    {%- set turns = messages[1:] -%}
{%- endif -%}
{%- for message in turns -%}
    {%- set wants_user = loop.index0 is even -%}
    {%- if (message.role == 'user') != wants_user -%}
        {{- raise_exception('Gemma conversations must alternate user and assistant turns, starting with user') -}}
    {%- endif -%}
    {{- '<start_of_turn>' ~ ('model' if message.role == 'assistant' else message.role) ~ '\n' -}}
    {%- if loop.first -%}{{- system_text -}}{%- endif -%}
    {{- content_text(message.content) -}}
    {{- '<end_of_turn>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<start_of_turn>model\n' -}}
{%- endif -%}
)JINJA";

const char* const kLlama3 = R"JINJA({#- Weir's built-in Llama 3 template: one header per turn, contents trimmed,
    tool results in the ipython role. -#}
{%- macro text(content) -%}
    {%- if content is string -%}{{- content -}}
    {%- elif content is mapping -%}{{- content | tojson -}}
    {%- elif content is sequence -%}
        {%- for part in content if part is mapping and part.type == 'text' -%}{{- part.text -}}{%- endfor -%}
    {%- elif content is not none -%}{{- content | tojson -}}
    {%- endif -%}
{%- endmacro -%}
{{- bos_token -}}
{%- for message in messages -%}
    {%- set role = 'ipython' if message.role == 'tool' else message.role -%}
    {{- '<|start_header_id|>' ~ role ~ '<|end_header_id|>\n\n' -}}
    {%- if message.tool_calls is defined and message.tool_calls -%}
        {%- for call in message.tool_calls -%}
            {%- set fn = call.function if call.function is defined else call -%}
            {{- '{"name": "' ~ fn.name ~ '", "parameters": ' -}}
            {{- fn.arguments if fn.arguments is string else fn.arguments | tojson -}}
            {{- '}' -}}
        {%- endfor -%}
    {%- else -%}
        {{- text(message.content) | trim -}}
    {%- endif -%}
    {{- '<|eot_id|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
{%- endif -%}
)JINJA";

const char* const kChatML = R"JINJA({#- Weir's built-in ChatML template. Tools are listed in the system turn;
    the model answers a call inside <tool_call></tool_call>; results come back
    as <tool_response> blocks in a user turn. -#}
{%- macro text(content) -%}
    {%- if content is string -%}{{- content -}}
    {%- elif content is mapping -%}{{- content | tojson -}}
    {%- elif content is sequence -%}
        {%- for part in content if part is mapping and part.type == 'text' -%}{{- part.text -}}{%- endfor -%}
    {%- elif content is not none -%}{{- content | tojson -}}
    {%- endif -%}
{%- endmacro -%}
{%- set rest = messages -%}
{%- if tools is defined and tools -%}
    {{- '<|im_start|>system\n' -}}
    {%- if messages | length > 0 and messages[0].role == 'system' -%}
        {{- text(messages[0].content) ~ '\n\n' -}}
        {%- set rest = messages[1:] -%}
    {%- endif -%}
    {{- '# Tools\n\nYou may call functions to help with the request. Their signatures:\n<tools>' -}}
    {%- for tool in tools -%}
        {{- '\n' ~ (tool | tojson) -}}
    {%- endfor -%}
    {{- '\n</tools>\n\nTo call a function, reply with a JSON object inside tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' -}}
{%- endif -%}
{%- for message in rest -%}
    {%- if message.role == 'tool' -%}
        {%- if loop.first or loop.previtem.role != 'tool' -%}{{- '<|im_start|>user' -}}{%- endif -%}
        {{- '\n<tool_response>\n' ~ text(message.content) ~ '\n</tool_response>' -}}
        {%- if loop.last or loop.nextitem.role != 'tool' -%}{{- '<|im_end|>\n' -}}{%- endif -%}
    {%- else -%}
        {{- '<|im_start|>' ~ message.role ~ '\n' -}}
        {{- text(message.content) -}}
        {%- if message.tool_calls is defined and message.tool_calls -%}
            {%- for call in message.tool_calls -%}
                {%- set fn = call.function if call.function is defined else call -%}
                {%- if message.content or not loop.first -%}{{- '\n' -}}{%- endif -%}
                {{- '<tool_call>\n{"name": "' ~ fn.name ~ '", "arguments": ' -}}
                {{- fn.arguments if fn.arguments is string else fn.arguments | tojson -}}
                {{- '}\n</tool_call>' -}}
            {%- endfor -%}
        {%- endif -%}
        {{- '<|im_end|>\n' -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|im_start|>assistant\n' -}}
{%- endif -%}
)JINJA";

}  // namespace weir::chat_builtin
