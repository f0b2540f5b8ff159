#pragma once
// Whether a model is most likely a base (pretrained) model: it has no chat
// template of its own and neither its name nor its file name says "it",
// "instruct", "chat", "sft" or "dpo". A base model continues text instead of
// answering, which the chat view and the Model page tell the user.
#include <QString>

namespace weir::desktop {

bool looksLikeBaseModel(const QString& name, const QString& fileName, bool hasOwnChatTemplate);

} // namespace weir::desktop
